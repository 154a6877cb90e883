/* Thread numbering by creation (docs/FORMAT.md, thread indices). Threads
 * are created in a fixed order but make their first events in another:
 *  - a constructor (not instrumented) starts and joins a thread that runs
 *      ctor_thread { ctor_work }
 *    before main's first event: it is the process's first event;
 *  - main creates `workers` threads (default 4) in order, then one that makes
 *    no event, in the middle of them. Worker k waits (not instrumented) for
 *    its turn, which goes from the last worker down to worker 0 (or, with
 *    a second argument `forward`, from worker 0 up), so first events come
 *    in reverse (or in) creation order; it runs
 *      worker { (k + 1) x step }
 *  - a C11 thread (thrd_create): c11_thread { step }
 *  - last, a thread created with the C library's pthread_create itself
 *    (found with dlsym in libc.so.6, so no interposer sees it):
 *      raw_thread { step step }
 * Expected indices: main 0, ctor_thread 1, workers 2, 3, (silent 4), 5, ...,
 * the C11 thread next, the raw thread last, in both orders. Prints
 * "workers W".
 *
 * `thread_order fork`: main creates a thread that runs
 *   forking_thread { step }   and forks; in the child, the forking thread
 *   (frames open at the fork re-entered) runs forking_thread { in_child },
 * in_child creating a thread that runs child_worker { step }. Expected:
 * parent 0 main, 1 ctor_thread, 2 forking_thread; child 0 forking_thread,
 * 1 child_worker (a fork child numbers its threads afresh). Prints "fork". */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <threads.h>
#include <unistd.h>

#include "hardening_common.h"

enum { kMaxWorkers = 64 };

volatile int sink;
static atomic_int turn = -1;  // the worker whose first event is due
static int direction = -1;    // the next turn: -1 reverse, +1 forward

NOINLINE void step(int x) {
  sink = x;
}

NOINLINE void ctor_work(void) {
  sink = -1;
}

NOINLINE void* ctor_thread(void* arg) {
  ctor_work();
  return arg;
}

NOINLINE void worker(int k) {
  atomic_store(&turn, k + direction);  // the next worker may start
  for (int i = 0; i <= k; ++i) step(i);
}

NOTRACE static void* worker_start(void* arg) {
  const int k = (int)(intptr_t)arg;
  while (atomic_load(&turn) != k) sched_yield();
  worker(k);
  return NULL;
}

NOTRACE static void* silent_thread(void* arg) {
  return arg;
}

NOINLINE int c11_thread(void* arg) {
  step(0);
  return (int)(intptr_t)arg;
}

NOINLINE void* raw_thread(void* arg) {
  step(0);
  step(1);
  return arg;
}

NOTRACE __attribute__((constructor)) static void start_ctor_thread(void) {
  pthread_t t;
  HCHECK(pthread_create(&t, NULL, ctor_thread, NULL) == 0);
  HCHECK(pthread_join(t, NULL) == 0);
}

typedef int (*CreateFn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

NOTRACE static int run(int workers) {
  pthread_t t[kMaxWorkers + 1];
  int n = 0;
  for (int k = 0; k < workers; ++k) {
    HCHECK(pthread_create(&t[n++], NULL, worker_start, (void*)(intptr_t)k) == 0);
    if (k == 1) HCHECK(pthread_create(&t[n++], NULL, silent_thread, NULL) == 0);
  }
  atomic_store(&turn, direction < 0 ? workers - 1 : 0);
  for (int k = 0; k < n; ++k) HCHECK(pthread_join(t[k], NULL) == 0);
  thrd_t c11;
  HCHECK(thrd_create(&c11, c11_thread, (void*)7) == thrd_success);
  int result = 0;
  HCHECK(thrd_join(c11, &result) == thrd_success && result == 7);
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  HCHECK(libc != NULL);
  CreateFn libc_create = (CreateFn)dlsym(libc, "pthread_create");
  HCHECK(libc_create != NULL);
  pthread_t raw;
  HCHECK(libc_create(&raw, NULL, raw_thread, NULL) == 0);
  HCHECK(pthread_join(raw, NULL) == 0);
  return workers;
}

NOINLINE void* child_worker(void* arg) {
  step(1);
  return arg;
}

NOINLINE void in_child(void) {
  pthread_t t;
  HCHECK(pthread_create(&t, NULL, child_worker, NULL) == 0);
  HCHECK(pthread_join(t, NULL) == 0);
}

NOINLINE void* forking_thread(void* arg) {
  step(0);
  const pid_t pid = fork();
  HCHECK(pid >= 0);
  if (pid == 0) {
    in_child();
    exit(0);
  }
  int status = 0;
  HCHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return arg;
}

NOTRACE static void run_fork(void) {
  pthread_t t;
  HCHECK(pthread_create(&t, NULL, forking_thread, NULL) == 0);
  HCHECK(pthread_join(t, NULL) == 0);
  printf("fork\n");
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "fork") == 0) {
    run_fork();
    return 0;
  }
  int workers = int_arg(argc > 1 ? argv[1] : NULL, 4);
  if (workers < 2) workers = 2;
  if (workers > kMaxWorkers) workers = kMaxWorkers;
  if (argc > 2 && strcmp(argv[2], "forward") == 0) direction = 1;
  printf("workers %d\n", run(workers));
  return 0;
}
