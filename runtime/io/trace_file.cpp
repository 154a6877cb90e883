#include "io/trace_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "io/node_file.h"
#include "io/own_fd.h"
#include "io/raw_io.h"
#include "io/virtual_fd.h"

namespace parlot::runtime {

int open_trace_file(const char* path, int flags) {
  if (const char* name = node_record_name(path)) {
    // A file of the node file: written only (a flight dump's copy, which
    // reads one back, is not made in the node layout).
    if ((flags & O_ACCMODE) == O_RDONLY) return -ENOENT;
    return node_open_virtual(name, (flags & (O_TRUNC | O_EXCL)) != 0);
  }
  for (int attempt = 0;; ++attempt) {
    const int fd = open_own(path, flags | O_NOFOLLOW, 0600);
    if (fd >= 0) return fd;
    const int err = -fd;
    if (err == EINTR) continue;
    if ((err != EMFILE && err != ENFILE) || attempt >= 200) return -err;
    const timespec pause{0, 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
}

namespace {

// "<dir>/.<name>.<tid>.tmp" for `path` "<dir>/<name>", in `out`: the same
// directory (so rename is atomic), a name no reader takes for a trace
// file, one per thread. False when too long.
bool temporary_path(char* out, std::size_t cap, const char* path) {
  const char* slash = std::strrchr(path, '/');
  const std::size_t dir_len = slash != nullptr ? static_cast<std::size_t>(slash - path) + 1 : 0;
  TextBuilder t(out, cap);
  t.str(path, dir_len).ch('.').str(path + dir_len).ch('.');
  t.u64(static_cast<std::uint64_t>(syscall(SYS_gettid))).str(".tmp");
  t.c_str();
  return !t.truncated();
}

// Writes `n` bytes of `data` into a new temporary file for `path` (its
// name in `tmp`, capacity `cap`), recording its identity in `id` when not
// null. Returns 0 or an errno (the temporary file then removed).
int write_temporary(char* tmp, std::size_t cap, const char* path, const void* data, std::size_t n,
                    FileIdentity* id) {
  if (!temporary_path(tmp, cap, path)) return ENAMETOOLONG;
  const int fd = open_trace_file(tmp, O_WRONLY | O_CREAT | O_TRUNC);
  if (fd < 0) return -fd;
  struct stat st;
  int err = id != nullptr && fstat(fd, &st) != 0 ? errno : 0;
  if (err == 0 && id != nullptr) *id = {st.st_dev, st.st_ino};
  if (err == 0) err = write_all(fd, data, n);
  close(fd);
  if (err != 0) unlink(tmp);
  return err;
}

}  // namespace

int rename_no_replace(const char* from, const char* to) {
  if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  // EPERM: a seccomp filter that refuses renameat2.
  if (errno != EINVAL && errno != ENOSYS && errno != EPERM)
    return errno == ENOTEMPTY ? EEXIST : errno;
  // A file system without RENAME_NOREPLACE: check, then rename.
  struct stat st;
  if (lstat(to, &st) == 0) return EEXIST;
  return rename(from, to) == 0 ? 0 : errno;
}

int create_trace_file(const char* path, const void* data, std::size_t n, FileIdentity& id) {
  if (const char* name = node_record_name(path)) {
    id = {};
    return node_write_record(format::NodeRecordKind::kReplace, name, data, n);
  }
  char tmp[1400];
  int err = write_temporary(tmp, sizeof tmp, path, data, n, &id);
  if (err == 0 && (err = rename_no_replace(tmp, path)) != 0) unlink(tmp);
  return err;
}

int open_checked(const char* path, const FileIdentity& id, bool append) {
  if (const char* name = node_record_name(path)) return node_open_virtual(name, false);
  const int fd = open_trace_file(path, O_WRONLY | (append ? O_APPEND : 0));
  if (fd < 0) return fd;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != id.device ||
      st.st_ino != id.inode) {
    close(fd);
    return -ESTALE;
  }
  return fd;
}

int append_trace_file(const char* path, const FileIdentity& id, const void* data, std::size_t n,
                      std::uint64_t keep_bytes) {
  if (const char* name = node_record_name(path)) {
    return node_write_record(format::NodeRecordKind::kAppend, name, data, n);
  }
  const int fd = open_checked(path, id, true);
  if (fd < 0) return -fd;
  const int err = write_all(fd, data, n);
  if (err != 0 && keep_bytes != ~std::uint64_t{0}) {
    (void)!ftruncate(fd, static_cast<off_t>(keep_bytes));
  }
  close(fd);
  return err;
}

int replace_trace_file(const char* path, const void* data, std::size_t n) {
  if (const char* name = node_record_name(path)) {
    return node_write_record(format::NodeRecordKind::kReplace, name, data, n);
  }
  char tmp[1400];
  int err = write_temporary(tmp, sizeof tmp, path, data, n, nullptr);
  if (err == 0 && rename(tmp, path) != 0) {
    err = errno;
    unlink(tmp);
  }
  return err;
}

void close_trace_fd(int fd) {
  if (is_virtual_fd(fd)) {
    node_close_virtual(fd);
  } else {
    close(fd);
  }
}

int write_trace_fd_at(int fd, const void* data, std::size_t n, std::uint64_t offset) {
  if (is_virtual_fd(fd)) return virtual_fd_write_at(fd, data, n, offset);
  const ssize_t w = pwrite(fd, data, n, static_cast<off_t>(offset));
  if (w == static_cast<ssize_t>(n)) return 0;
  return w < 0 && errno != 0 ? errno : EIO;
}

bool join_path(char* out, std::size_t cap, const char* dir, const char* name) {
  TextBuilder p(out, cap);
  p.str(dir).ch('/').str(name);
  p.c_str();
  return !p.truncated();
}

}  // namespace parlot::runtime
