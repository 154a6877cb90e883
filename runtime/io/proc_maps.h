// The process's mappings, read from /proc/self/maps with raw system calls:
// no malloc, no stdio, so usable at a thread's first event, inside a hook
// and in a signal handler. Cold: one pass over the file per call.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

/// One line of /proc/self/maps.
struct Mapping {
  std::uintptr_t start = 0;     ///< first byte of the mapping
  std::uintptr_t end = 0;       ///< one past its last byte
  std::uintptr_t prev_end = 0;  ///< end of the line before it (0 for the first)
};

/// Finds the mapping that contains `address` and stores it in `out`. When
/// `path` is not null, its path name (what the kernel shows: the file's
/// absolute path as the process opened it, right even after a chdir;
/// "[stack]" and the like for special mappings; "" for an anonymous one) is
/// copied there, NUL-terminated (capacity `cap` bytes; a longer name is
/// given as ""). Returns false when the file cannot be read or no mapping
/// holds `address`. Async-signal-safe; errno is kept.
bool find_mapping(std::uintptr_t address, Mapping& out, char* path = nullptr, std::size_t cap = 0);

/// The absolute path of the loaded object whose link-map name is `name`
/// and which is mapped at `address` (any address of its mapped file), in
/// `out` (capacity `cap`): `name` itself when absolute; otherwise the path
/// /proc/self/maps shows for that mapping, and none when it shows no file
/// there (the vdso's "[vdso]"); when /proc cannot be read, the current
/// directory joined with `name` (right while the process has not changed
/// directory since it loaded the object). Returns false when no absolute
/// path could be had (`out` is then ""). Async-signal-safe; errno is kept.
bool absolute_object_path(const char* name, std::uintptr_t address, char* out, std::size_t cap);

}  // namespace parlot::runtime
