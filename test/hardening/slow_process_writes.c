/* Preloaded after libparlotrt.so by the kill-loop test: interposes write(2)
 * and sleeps 60 ms before each write to a process directory's "process"
 * file (or the runtime's temporary file for it, ".process.<tid>.tmp"), so
 * that a SIGKILL sent around the end of a run lands inside that rewrite
 * most of the time instead of in a window of microseconds. Not
 * instrumented. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int is_process_file(int fd) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  const char* base = strrchr(path, '/');
  base = base != NULL ? base + 1 : path;
  return strcmp(base, "process") == 0 || strncmp(base, ".process.", 9) == 0;
}

ssize_t write(int fd, const void* data, size_t n) {
  if (is_process_file(fd)) {
    struct timespec pause = {0, 60 * 1000 * 1000};
    while (nanosleep(&pause, &pause) != 0) {
    }
  }
  return syscall(SYS_write, fd, data, n);
}
