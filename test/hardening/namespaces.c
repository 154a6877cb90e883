/* Namespace calls that the kernel refuses in a multi-threaded process:
 * unshare(CLONE_NEWUSER) and setns() into the process's own mount
 * namespace. Untraced they succeed (where the machine allows them); traced,
 * the runtime's idle flusher thread must not make them fail.
 *
 *   namespaces unshare  main { before { leaf } after { leaf } }, prints the
 *                       unshare result and, traced, the thread count after
 *                       it (the flusher is back: 2);
 *   namespaces setns    the same with setns(); traced, it then waits in
 *                       idle_wait with no event until the trace directory
 *                       grows (the flusher, started again, wrote the idle
 *                       thread's data), at most 10 s. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hardening_common.h"

volatile int sink;

NOINLINE void leaf(int x) {
  sink = x;
}
NOINLINE void before(int x) {
  leaf(x);
}
NOINLINE void after(int x) {
  leaf(x);
}

static long long g_bytes;

NOTRACE static int add_size(const char* path, const struct stat* st, int kind, struct FTW* ftw) {
  (void)path;
  (void)ftw;
  if (kind == FTW_F) g_bytes += st->st_size;
  return 0;
}

/* Bytes of the files under `dir`. */
NOTRACE static long long directory_bytes(const char* dir) {
  g_bytes = 0;
  nftw(dir, add_size, 16, FTW_PHYS);
  return g_bytes;
}

/* Makes no event until the trace directory holds more than `bytes`
 * (returns 1) or 10 s passed (returns 0). */
NOINLINE int idle_wait(const char* dir, long long bytes) {
  for (int i = 0; i < 1000; ++i) {
    if (directory_bytes(dir) > bytes) return 1;
    const struct timespec ten_ms = {0, 10000000};
    nanosleep(&ten_ms, NULL);
  }
  return 0;
}

/* The "Threads:" line of /proc/self/status, or -1. */
NOTRACE static int thread_count(void) {
  FILE* f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  char line[256];
  int n = -1;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "Threads:", 8) == 0) n = (int)strtol(line + 8, NULL, 10);
  }
  fclose(f);
  return n;
}

NOTRACE static void print_result(const char* call, int r) {
  printf("%s: %s\n", call, r == 0 ? "ok" : strerrorname_np(errno));
}

int main(int argc, char** argv) {
  HCHECK(argc == 2);
  const char* trace_dir = getenv("PARLOT_DIR");
  before(1);
  if (strcmp(argv[1], "unshare") == 0) {
    print_result("unshare(CLONE_NEWUSER)", unshare(CLONE_NEWUSER));
    after(2);
    if (trace_dir != NULL) {
      /* The flusher wakes every 10 ms here: wait for it to run again. */
      int threads = thread_count();
      for (int i = 0; i < 500 && threads == 1; ++i) {
        const struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        threads = thread_count();
      }
      printf("threads after: %d\n", threads);
    }
  } else if (strcmp(argv[1], "setns") == 0) {
    const int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    HCHECK(fd >= 0);
    print_result("setns(mnt)", setns(fd, CLONE_NEWNS));
    close(fd);
    after(2);
    if (trace_dir != NULL) {
      const long long bytes = directory_bytes(trace_dir);
      printf("idle thread written: %s\n", idle_wait(trace_dir, bytes) ? "yes" : "no");
    }
  } else {
    HCHECK(0);
  }
  return 0;
}
