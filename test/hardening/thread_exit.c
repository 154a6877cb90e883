/* Case 4: threads that end in the middle of nested calls. Three threads, one
 * after the other (thread indices 1, 2, 3 are then deterministic):
 *   #1 exit_worker { tx_outer { tx_inner { leaf } tx_cleanup { leaf } } }
 *      tx_inner calls pthread_exit; the cleanup handler pushed by tx_outer runs
 *      while the thread unwinds, in tx_outer's frame
 *   #2 pause_worker { c_outer { c_inner { leaf } c_cleanup { leaf } } }
 *      c_inner blocks in pause() and is cancelled
 *   #3 cond_worker { w_outer { w_inner { leaf } w_cleanup { leaf } } }
 *      w_inner blocks in pthread_cond_wait and is cancelled
 *   main { run_exit { ... } run_pause { ... } run_cond { ... } } */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "hardening_common.h"

volatile int sink;
static atomic_int ready;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

NOINLINE void leaf(int x) {
  sink = x;
}

/* ---- pthread_exit two calls deep ---- */
NOINLINE void tx_cleanup(void* arg) {
  leaf((int)(long)arg);
}
NOINLINE void tx_inner(void) {
  leaf(1);
  pthread_exit((void*)42);
}
NOINLINE void tx_outer(void) {
  pthread_cleanup_push(tx_cleanup, (void*)2);
  tx_inner();
  leaf(-1);
  pthread_cleanup_pop(0);
}
NOINLINE void* exit_worker(void* arg) {
  (void)arg;
  tx_outer();
  leaf(-1);
  return NULL;
}

/* ---- cancelled in pause() two calls deep ---- */
NOINLINE void c_cleanup(void* arg) {
  leaf((int)(long)arg);
}
NOINLINE void c_inner(void) {
  leaf(3);
  atomic_store(&ready, 1);
  for (;;) pause();
}
NOINLINE void c_outer(void) {
  pthread_cleanup_push(c_cleanup, (void*)4);
  c_inner();
  pthread_cleanup_pop(0);
}
NOINLINE void* pause_worker(void* arg) {
  (void)arg;
  c_outer();
  return NULL;
}

/* ---- cancelled in pthread_cond_wait two calls deep ---- */
NOINLINE void w_cleanup(void* arg) {
  leaf((int)(long)arg);
  pthread_mutex_unlock(&lock); /* cond_wait re-acquired it */
}
NOINLINE void w_inner(void) {
  leaf(5);
  pthread_mutex_lock(&lock);
  atomic_store(&ready, 1);
  for (;;) pthread_cond_wait(&never, &lock);
}
NOINLINE void w_outer(void) {
  pthread_cleanup_push(w_cleanup, (void*)6);
  w_inner();
  pthread_cleanup_pop(0);
}
NOINLINE void* cond_worker(void* arg) {
  (void)arg;
  w_outer();
  return NULL;
}

NOTRACE static void wait_ready(void) {
  while (!atomic_load(&ready)) sched_yield();
  atomic_store(&ready, 0);
}

NOINLINE long run_exit(void) {
  pthread_t t;
  void* ret = NULL;
  HCHECK(pthread_create(&t, NULL, exit_worker, NULL) == 0);
  HCHECK(pthread_join(t, &ret) == 0);
  return (long)ret;
}

NOINLINE int run_pause(void) {
  pthread_t t;
  void* ret = NULL;
  HCHECK(pthread_create(&t, NULL, pause_worker, NULL) == 0);
  wait_ready();
  HCHECK(pthread_cancel(t) == 0);
  HCHECK(pthread_join(t, &ret) == 0);
  return ret == PTHREAD_CANCELED;
}

NOINLINE int run_cond(void) {
  pthread_t t;
  void* ret = NULL;
  HCHECK(pthread_create(&t, NULL, cond_worker, NULL) == 0);
  wait_ready();
  /* Taking the lock proves the thread is inside pthread_cond_wait. */
  pthread_mutex_lock(&lock);
  pthread_mutex_unlock(&lock);
  HCHECK(pthread_cancel(t) == 0);
  HCHECK(pthread_join(t, &ret) == 0);
  return ret == PTHREAD_CANCELED;
}

int main(void) {
  const long exited = run_exit();
  const int paused = run_pause();
  const int waited = run_cond();
  printf("exit %ld pause %d cond %d\n", exited, paused, waited);
  return 0;
}
