// Descriptors of the files of a node file (node_file.h): in the node
// layout a process's files live as records in one node file, and the code
// that writes them through a descriptor (open, write_all, close) gets a
// virtual one, a number far above any real descriptor, whose writes
// become records. Async-signal-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

/// Lowest virtual descriptor: above the kernel's largest possible
/// descriptor number (fs.nr_open is at most 2^30).
inline constexpr int kVirtualFdBase = 0x70000000;

/// True when `fd` is a virtual descriptor (it may be closed already).
inline bool is_virtual_fd(int fd) {
  return fd >= kVirtualFdBase;
}

/// Appends `n` bytes at `data` to the file of virtual descriptor `fd` (one
/// record). Returns 0 or an errno (EBADF when `fd` is not open).
int virtual_fd_write(int fd, const void* data, std::size_t n);

/// Writes `n` bytes at `data` at byte `offset` of the file of virtual
/// descriptor `fd` (one record). Returns 0 or an errno.
int virtual_fd_write_at(int fd, const void* data, std::size_t n, std::uint64_t offset);

}  // namespace parlot::runtime
