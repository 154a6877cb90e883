#include "io/trace_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "io/own_fd.h"
#include "io/raw_io.h"

namespace parlot::runtime {

int open_trace_file(const char* path, int flags) {
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
  char tmp[1400];
  int err = write_temporary(tmp, sizeof tmp, path, data, n, &id);
  if (err == 0 && (err = rename_no_replace(tmp, path)) != 0) unlink(tmp);
  return err;
}

int open_checked(const char* path, const FileIdentity& id, bool append) {
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
  char tmp[1400];
  int err = write_temporary(tmp, sizeof tmp, path, data, n, nullptr);
  if (err == 0 && rename(tmp, path) != 0) {
    err = errno;
    unlink(tmp);
  }
  return err;
}

bool join_path(char* out, std::size_t cap, const char* dir, const char* name) {
  TextBuilder p(out, cap);
  p.str(dir).ch('/').str(name);
  p.c_str();
  return !p.truncated();
}

}  // namespace parlot::runtime
