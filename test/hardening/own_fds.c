/* The runtime's own descriptors stay out of the program's way: never at the
 * program's low numbers, close-on-exec from their creation.
 * Usage: own_fds FORKS THREADS
 *   main: a longjmp out of jumper{ leaf } (the runtime then walks the real
 *   stack), THREADS threads calling spin{ leaf } in a loop (100 calls a
 *   millisecond: their blocks are
 *   written meanwhile, and the idle flusher runs), then FORKS times: fork;
 *   the child lists its descriptors before anything else (a raw getdents64
 *   of /proc/self/fd) and execs `/bin/sh -c 'ls /proc/$$/fd'` (the shell's
 *   descriptors while ls runs: 0 1 2 as untraced); the parent reads the
 *   listing through a pipe. Prints "forks F, children with a foreign low fd
 *   C, listings not '0 1 2' L" (the first one that is not on stderr),
 *   then the fd the program's first open() returns.
 * A descriptor is foreign when it is not 0, 1, 2, the pipe or the listing,
 * and is below three quarters of min(RLIMIT_NOFILE, 4096) or not
 * close-on-exec. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hardening_common.h"

volatile int sink;
static jmp_buf jump;
static atomic_int stop;

NOINLINE void leaf(int x) {
  sink = x;
}
NOINLINE void jumper(void) {
  leaf(1);
  longjmp(jump, 1);
}
NOINLINE void* spin(void* arg) {
  (void)arg;
  const struct timespec pause = {0, 1000 * 1000};
  while (!atomic_load(&stop)) {
    for (int i = 0; i < 100; ++i) leaf(2);
    nanosleep(&pause, NULL);
  }
  return NULL;
}

/* In the child, between fork and exec: the number of foreign descriptors
 * (raw system calls only). */
NOTRACE static int foreign_fds(const int own[2]) {
  struct rlimit lim;
  HCHECK(getrlimit(RLIMIT_NOFILE, &lim) == 0);
  const long cap = lim.rlim_cur > 4096 ? 4096 : (long)lim.rlim_cur;
  const long floor = cap - cap / 4;
  const int dir = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY);
  HCHECK(dir >= 0);
  char buf[4096] __attribute__((aligned(8)));
  int foreign = 0;
  for (;;) {
    const long got = syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      unsigned short reclen;
      memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char* name = buf + off + 19;
      off += reclen;
      if (name[0] < '0' || name[0] > '9') continue;
      const int fd = (int)strtol(name, NULL, 10);
      if (fd <= 2 || fd == dir || fd == own[0] || fd == own[1]) continue;
      const int flags = (int)syscall(SYS_fcntl, fd, F_GETFD);
      if (fd < floor || (flags & FD_CLOEXEC) == 0) ++foreign;
    }
  }
  syscall(SYS_close, dir);
  return foreign;
}

/* One fork: returns 1 when the child saw a foreign fd (its exit status 3),
 * and counts in *bad_listing a listing that is not exactly 0 1 2. */
NOTRACE static int fork_once(int* bad_listing) {
  int out[2];
  HCHECK(pipe(out) == 0);
  const pid_t child = fork();
  HCHECK(child >= 0);
  if (child == 0) {
    const int foreign = foreign_fds(out);
    if (foreign != 0) syscall(SYS_exit_group, 3);
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    char* const argv[] = {"sh", "-c", "ls /proc/$$/fd", NULL};
    extern char** environ;
    execve("/bin/sh", argv, environ);
    syscall(SYS_exit_group, 4);
  }
  close(out[1]);
  char listing[256];
  size_t n = 0;
  ssize_t r;
  while (n < sizeof listing - 1 && (r = read(out[0], listing + n, sizeof listing - 1 - n)) > 0) {
    n += (size_t)r;
  }
  listing[n] = '\0';
  close(out[0]);
  int status = 0;
  HCHECK(waitpid(child, &status, 0) == child && WIFEXITED(status));
  if (WEXITSTATUS(status) == 3) return 1;
  HCHECK(WEXITSTATUS(status) == 0);
  if (strcmp(listing, "0\n1\n2\n") != 0) {
    if (*bad_listing == 0) fprintf(stderr, "listing: %s", listing);
    *bad_listing += 1;
  }
  return 0;
}

NOINLINE void jump_once(void) {
  if (!setjmp(jump)) jumper();
  leaf(0); /* the first entry after the longjmp: the runtime walks the stack */
}

int main(int argc, char** argv) {
  const int forks = int_arg(argc > 1 ? argv[1] : NULL, 200);
  const int threads = int_arg(argc > 2 ? argv[2] : NULL, 2);
  jump_once();
  pthread_t t[16];
  HCHECK(threads <= 16);
  for (int i = 0; i < threads; ++i) HCHECK(pthread_create(&t[i], NULL, spin, NULL) == 0);
  int foreign = 0, bad_listing = 0;
  for (int i = 0; i < forks; ++i) foreign += fork_once(&bad_listing);
  atomic_store(&stop, 1);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  printf("forks %d, children with a foreign low fd %d, listings not '0 1 2' %d\n", forks, foreign,
         bad_listing);
  const int fd = open("/dev/null", O_RDONLY);
  printf("first fd %d\n", fd);
  return 0;
}
