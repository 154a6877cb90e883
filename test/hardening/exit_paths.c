/* Case 3: leaving the process several calls deep.
 * Usage: exit_paths MODE [N]
 *   exit         main { do_work { N x leaf } exit_outer { exit_middle { exit_inner {
 *                  at_exit_second { leaf } at_exit_first { leaf } } } } }, status 3
 *   exit_thread  a second thread calls exit() three calls deep while the main
 *                thread waits two calls deep in pthread_join; status 3
 *   _exit        as exit, but _exit(4): no atexit handlers, no destructors
 *   abort        as exit, but abort(): killed by SIGABRT */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "hardening_common.h"

volatile int sink;
static const char* mode;
static atomic_int main_waiting;

NOINLINE void leaf(int x) {
  sink = x;
}

NOINLINE void at_exit_first(void) {
  leaf(1);
}
NOINLINE void at_exit_second(void) {
  leaf(2);
}

NOINLINE void do_work(int n) {
  for (int i = 0; i < n; ++i) leaf(i);
}

NOTRACE static void say(const char* what) {
  /* write(2): nothing buffered in stdio that _exit or abort would lose. */
  if (write(1, what, strlen(what)) < 0) _exit(71);
}

NOINLINE void exit_inner(void) {
  if (strcmp(mode, "_exit") == 0) {
    say("_exit\n");
    _exit(4);
  } else if (strcmp(mode, "abort") == 0) {
    say("abort\n");
    abort();
  }
  say("exit\n");
  exit(3);
}
NOINLINE void exit_middle(void) {
  exit_inner();
  leaf(-1);
}
NOINLINE void exit_outer(void) {
  exit_middle();
  leaf(-1);
}

NOINLINE void* exiting_thread(void* arg) {
  (void)arg;
  /* Not before the main thread is two calls deep. */
  while (!atomic_load(&main_waiting)) sched_yield();
  exit_outer();
  return NULL;
}
NOINLINE void wait_inner(pthread_t t) {
  atomic_store(&main_waiting, 1);
  pthread_join(t, NULL);
  leaf(-1); /* never reached: the other thread exits the process */
}
NOINLINE void wait_outer(pthread_t t) {
  wait_inner(t);
  leaf(-1);
}

int main(int argc, char** argv) {
  mode = argc > 1 ? argv[1] : "exit";
  const int n = int_arg(argc > 2 ? argv[2] : NULL, 3);
  HCHECK(atexit(at_exit_first) == 0);
  HCHECK(atexit(at_exit_second) == 0);
  /* abort() must not leave a core file behind. */
  signal(SIGABRT, SIG_DFL);
  do_work(n);
  if (strcmp(mode, "exit_thread") == 0) {
    pthread_t t;
    HCHECK(pthread_create(&t, NULL, exiting_thread, NULL) == 0);
    wait_outer(t);
  } else {
    exit_outer();
  }
  return 0;
}
