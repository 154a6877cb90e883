/* errno is the program's: a hook must not change it. Each case sets errno,
 * then calls an instrumented function whose hook does the runtime's slow
 * work (a system call that may fail and set errno), then reads errno:
 *
 *   main     the process's first sight of a function;
 *   thread   a new thread's first event (its trace: a file, a mapping);
 *   child    a fork child's first event (its own trace directory; the
 *            parent's already exists: mkdir gave EEXIST, seen as errno 17
 *            before the runtime kept errno);
 *   loop     N calls of 8 functions in a pseudo-random order, errno set
 *            before each: with a small output buffer the hooks write
 *            blocks, and with a short flush period they meet the idle
 *            flusher's rounds.
 * Prints one line per case; untraced and traced must print the same. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hardening_common.h"

volatile int sink;

NOINLINE void first(int x) {
  sink = x;
}
NOINLINE void in_thread(int x) {
  sink = x;
}
NOINLINE void in_child(int x) {
  sink = x;
}
NOINLINE void f0(int x) {
  sink = x;
}
NOINLINE void f1(int x) {
  sink = x + 1;
}
NOINLINE void f2(int x) {
  f0(x);
}
NOINLINE void f3(int x) {
  f1(x);
}
NOINLINE void f4(int x) {
  sink = x * 3;
}
NOINLINE void f5(int x) {
  f4(x);
  f0(x);
}
NOINLINE void f6(int x) {
  sink = x ^ 5;
}
NOINLINE void f7(int x) {
  f6(x);
  f2(x);
}

NOTRACE static void report(const char* where, int expected) {
  printf("%s: errno %s\n", where, errno == expected ? "kept" : "changed");
}

/* A SIGCHLD handler that reaps children until ECHILD, as programs do: the
 * errno it leaves is what the interrupted code sees (the kernel does not
 * restore errno after a handler), traced as untraced. */
static volatile sig_atomic_t child_reaped;
NOINLINE static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  if (errno != ECHILD) errno = ECHILD;
  child_reaped = 1;
}

NOTRACE static void* thread_main(void* arg) {
  errno = 4321;
  in_thread(1);
  report("thread", 4321);
  return arg;
}

int main(int argc, char** argv) {
  const int calls = int_arg(argc > 1 ? argv[1] : NULL, 400000);
  errno = 1234;
  first(1);
  report("main", 1234);

  pthread_t t;
  HCHECK(pthread_create(&t, NULL, thread_main, NULL) == 0);
  HCHECK(pthread_join(t, NULL) == 0);

  fflush(stdout);
  const pid_t pid = fork();
  HCHECK(pid >= 0);
  if (pid == 0) {
    errno = 5678;
    in_child(2);
    report("child", 5678);
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  HCHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);

  /* The handler's errno reaches the code it interrupted. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_child;
  HCHECK(sigaction(SIGCHLD, &sa, NULL) == 0);
  fflush(stdout);
  errno = 0; /* fork() succeeding leaves it */
  const pid_t reaped = fork();
  if (reaped == 0) {
    usleep(20000); /* the signal comes while the parent's loop runs */
    _exit(0);
  }
  HCHECK(reaped > 0);
  while (!child_reaped) first(3); /* the hooks run while the signal comes */
  printf("handler: errno %s\n", errno == ECHILD ? "is the handler's" : "changed");
  signal(SIGCHLD, SIG_DFL);

  void (*const fns[8])(int) = {f0, f1, f2, f3, f4, f5, f6, f7};
  unsigned state = 12345;
  int changed = 0;
  for (int i = 0; i < calls; ++i) {
    state = state * 1103515245u + 12345u;
    const int want = 7000 + i % 100;
    errno = want;
    fns[(state >> 16) & 7](i);
    changed += errno != want;
  }
  printf("loop: %d calls, errno changed after %d\n", calls, changed);
  return 0;
}
