/* A job ended the way batch systems end jobs: SIGTERM, then SIGKILL.
 *
 *   terminated handled MS   the program handles SIGTERM itself (its handler
 *                           writes "handled N us after SIGTERM" and returns:
 *                           the program goes on); a killer child sends
 *                           SIGTERM after MS ms, and SIGKILL once the handler
 *                           ran (1 s at most)
 *   terminated default MS   the same with SIGTERM's default action (SIGKILL
 *                           1 s after SIGTERM, if it is still alive)
 *   terminated short N      N threads make calls for a few ms, then the
 *                           program exits normally (the kill-loop test kills
 *                           it at random instants around its end)
 *
 * In the first two, a worker thread makes calls as fast as it can and
 * counts them in shared memory; a second thread blocks in read(2) inside
 * blocked_in_read(); the main thread waits in wait_for_signal(). The killer
 * (a child that runs no instrumented code) prints "calls before SIGTERM N",
 * the worker's count read just before it sent SIGTERM: every one of those
 * calls must be in the trace, although PARLOT_FLUSH_MS is far away. The
 * handler's line says how long after SIGTERM it ran: the time the runtime
 * took to write every thread first. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hardening_common.h"

/* Shared with the killer child. */
struct shared {
  _Atomic long calls_made;  /* the worker's loop iterations */
  _Atomic long term_ns;     /* CLOCK_MONOTONIC when SIGTERM was sent */
  _Atomic int handler_done; /* the program's handler ran */
};
static struct shared* shared;
static int blocker_pipe[2];
volatile int sink;

NOINLINE void work(int i) {
  sink = i;
}

NOINLINE void blocked_in_read(void) {
  char c;
  (void)!read(blocker_pipe[0], &c, 1);
}

NOINLINE void wait_for_signal(void) {
  for (;;) pause();
}

NOINLINE void step(int i) {
  work(i);
  work(i + 1);
}

NOTRACE static void block_termination_signals(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
}

NOTRACE static void* worker_main(void* arg) {
  (void)arg;
  block_termination_signals(); /* the main thread takes SIGTERM */
  for (int i = 0;; ++i) {
    step(i);
    atomic_fetch_add_explicit(&shared->calls_made, 1, memory_order_relaxed);
  }
  return NULL;
}

NOTRACE static void* blocker_main(void* arg) {
  (void)arg;
  block_termination_signals();
  blocked_in_read();
  return NULL;
}

NOTRACE static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

NOTRACE static long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Async-signal-safe: formats with no stdio. */
NOTRACE static void on_term(int sig) {
  (void)sig;
  long us = (now_ns() - atomic_load(&shared->term_ns)) / 1000;
  char line[64] = "handled ";
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + us % 10);
    us /= 10;
  } while (us > 0);
  size_t len = 8;
  while (n > 0) line[len++] = digits[--n];
  memcpy(line + len, " us after SIGTERM\n", 18);
  len += 18;
  (void)!write(1, line, len);
  atomic_store(&shared->handler_done, 1);
}

/* The killer: runs no instrumented code, so it leaves no trace. */
NOTRACE static void killer(pid_t target, long ms) {
  sleep_ms(ms);
  const long seen = atomic_load(&shared->calls_made);
  char line[64];
  const int n = snprintf(line, sizeof line, "calls before SIGTERM %ld\n", seen);
  (void)!write(1, line, (size_t)n);
  atomic_store(&shared->term_ns, now_ns());
  kill(target, SIGTERM);
  for (int i = 0; i < 1000 && !atomic_load(&shared->handler_done); ++i) sleep_ms(1);
  kill(target, SIGKILL);
  _exit(0);
}

NOINLINE void short_work(int n) {
  for (int i = 0; i < n; ++i) step(i);
}

NOTRACE static void* short_main(void* arg) {
  short_work((int)(long)arg);
  return NULL;
}

int main(int argc, char** argv) {
  HCHECK(argc >= 3);
  const char* mode = argv[1];
  if (strcmp(mode, "short") == 0) {
    /* Threads alive at the end: the process end writes each one's file. */
    const int threads = int_arg(argv[2], 8);
    pthread_t t[64];
    HCHECK(threads > 0 && threads <= 64);
    for (int i = 0; i < threads; ++i) {
      HCHECK(pthread_create(&t[i], NULL, short_main, (void*)(long)(20000 + 1000 * i)) == 0);
    }
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    short_work(1000);
    return 0;
  }
  const long ms = int_arg(argv[2], 300);
  shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  HCHECK(shared != MAP_FAILED);
  HCHECK(pipe(blocker_pipe) == 0);
  if (strcmp(mode, "handled") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    HCHECK(sigaction(SIGTERM, &sa, NULL) == 0);
  } else {
    HCHECK(strcmp(mode, "default") == 0);
  }
  pthread_t worker, blocker;
  HCHECK(pthread_create(&worker, NULL, worker_main, NULL) == 0);
  HCHECK(pthread_create(&blocker, NULL, blocker_main, NULL) == 0);
  fflush(stdout);
  const pid_t self = getpid();
  const pid_t child = fork();
  HCHECK(child >= 0);
  if (child == 0) killer(self, ms);
  wait_for_signal();
  return 0;
}
