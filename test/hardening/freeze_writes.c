/* Preloaded after libparlotrt.so by the frozen-thread test (issue 8, case
 * 11): interposes write(2) and freezes for good the first write to a
 * "*.trace" file made by a thread named "frozen" (a thread stopped inside a
 * hook, as a debugger or stuck storage would stop it). Sets
 * parlot_test_frozen_in_write to 1 when it froze. Not instrumented. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile int parlot_test_frozen_in_write;

static int is_trace_file(int fd) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 6) return 0;
  path[n] = '\0';
  return strcmp(path + n - 6, ".trace") == 0;
}

ssize_t write(int fd, const void* data, size_t n) {
  char name[16] = "";
  if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 && strcmp(name, "frozen") == 0 &&
      is_trace_file(fd)) {
    parlot_test_frozen_in_write = 1;
    for (;;) pause();
  }
  return syscall(SYS_write, fd, data, n);
}
