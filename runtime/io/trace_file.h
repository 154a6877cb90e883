// The files of the trace directory, written without holding a descriptor in
// the program's descriptor space: each write opens its file by absolute path
// (O_CLOEXEC | O_NOFOLLOW), checks with fstat that it is the file the
// runtime created (device and inode recorded at creation), writes and
// closes. A program that closes every descriptor, dup2s onto any number or
// runs at a tight RLIMIT_NOFILE never meets one of the runtime's, and never
// receives trace bytes. All functions are async-signal-safe (open, fstat,
// write, close, nanosleep) and return 0 or an errno. In the node layout
// (node_file.h) a path below the node file's names a file of it: the
// functions then write records to the node file instead.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

/// Which file a path named when the runtime created it.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
};

/// Opens `path` with `flags` (O_CLOEXEC | O_NOFOLLOW added; mode 0600 when
/// created). When the process is out of descriptors (EMFILE, ENFILE) the
/// open is retried for up to about 200 ms: the program's descriptors are
/// the program's, the runtime waits for one. Returns the descriptor, or
/// -errno.
int open_trace_file(const char* path, int flags);

/// Creates `path` (which must not exist: EEXIST otherwise) with `n` bytes
/// of `data` and records its identity in `id`, atomically: the data goes
/// to a temporary file in the same directory (".<name>.<tid>.tmp"), which
/// then takes the name (rename_no_replace), so a SIGKILL never leaves an
/// empty or cut file under `path`.
int create_trace_file(const char* path, const void* data, std::size_t n, FileIdentity& id);

/// Opens `path` for writing (`append`: O_APPEND) and checks that it is
/// the file `id`; returns the descriptor, or -errno (-ESTALE when the path
/// now names another file). The caller closes it.
int open_checked(const char* path, const FileIdentity& id, bool append);

/// Appends `n` bytes of `data` to the file `id` at `path`. When the write
/// fails part-way, the file is cut back to `keep_bytes` (if not ~0), so it
/// ends at its last complete record.
int append_trace_file(const char* path, const FileIdentity& id, const void* data, std::size_t n,
                      std::uint64_t keep_bytes = ~std::uint64_t{0});

/// Creates or replaces `path` with `n` bytes of `data`, atomically: the
/// data goes to a temporary file in the same directory
/// (".<name>.<tid>.tmp"), which then takes the name with rename(2), so a
/// SIGKILL at any instant leaves the old file or the new one, never a cut
/// one (a killed writer may leave its temporary file; readers skip
/// dot-files).
int replace_trace_file(const char* path, const void* data, std::size_t n);

/// Renames `from` to `to` unless `to` exists: renameat2(RENAME_NOREPLACE),
/// or, on a file system without that flag, a check then rename(2). Returns
/// 0 or an errno (EEXIST when `to` exists).
int rename_no_replace(const char* from, const char* to);

/// Closes a descriptor that open_trace_file() or open_checked() returned
/// (a virtual one of the node layout, node_file.h, included).
void close_trace_fd(int fd);

/// Writes `n` bytes of `data` at byte `offset` of the file of descriptor
/// `fd` (from open_trace_file() or open_checked(); pwrite(2), or a
/// record in the node layout). Returns 0 or an errno (EIO: short write).
int write_trace_fd_at(int fd, const void* data, std::size_t n, std::uint64_t offset);

/// Builds "<dir>/<name>" into `out` (capacity `cap`); false when too long.
bool join_path(char* out, std::size_t cap, const char* dir, const char* name);

}  // namespace parlot::runtime
