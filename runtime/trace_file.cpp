#include "trace_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "own_fd.h"
#include "raw_io.h"

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

int create_trace_file(const char* path, const void* data, std::size_t n, FileIdentity& id) {
  const int fd = open_trace_file(path, O_WRONLY | O_CREAT | O_EXCL);
  if (fd < 0) return -fd;
  struct stat st;
  int err = fstat(fd, &st) == 0 ? 0 : errno;
  if (err == 0) {
    id.device = st.st_dev;
    id.inode = st.st_ino;
    err = write_all(fd, data, n);
  }
  close(fd);
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
  const int fd = open_trace_file(path, O_WRONLY | O_CREAT | O_TRUNC);
  if (fd < 0) return -fd;
  const int err = write_all(fd, data, n);
  close(fd);
  return err;
}

bool join_path(char* out, std::size_t cap, const char* dir, const char* name) {
  TextBuilder p(out, cap);
  p.str(dir).ch('/').str(name);
  p.c_str();
  return !p.truncated();
}

}  // namespace parlot::runtime
