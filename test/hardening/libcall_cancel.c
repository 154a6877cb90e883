/* Case 11 (plain C, no -fexceptions): a thread cancelled inside a library
 * call (PARLOT_LIBCALLS=1), deferred cancellation. Usage:
 *   libcall_cancel CALL WHEN WHERE
 *     CALL   read (of an empty pipe) or usleep: where the thread blocks
 *     WHEN   blocked: cancelled while blocked in CALL;
 *            pending: cancelled before it calls CALL, which then acts on it
 *     WHERE  deeper: `blocks` calls CALL; here: `inner` calls it itself
 * The thread pushes a cleanup handler in `outer` and another in `inner`,
 * one call deeper, then calls CALL. glibc unwinds it: it longjmps into
 * `inner` to run inner_cleanup, which goes on unwinding with
 * __pthread_unwind_next, then into `outer` for outer_cleanup. The handlers'
 * frames are larger than those they replace, so only the stack cut tells
 * that `blocks`, CALL and `inner` are gone. The thread's calls
 * (pthread_cleanup_push calls __pthread_register_cancel; the runtime
 * interposes __pthread_unwind_next, so that is not recorded), deeper:
 *   cancelled_worker { outer { __pthread_register_cancel
 *     inner { __pthread_register_cancel blocks { leaf CALL }
 *             inner_cleanup { leaf } }
 *     outer_cleanup { leaf } } }
 * here: the same with `leaf CALL` in place of `blocks { leaf CALL }`.
 * main { run_cancel { pipe pthread_create usleep pthread_join } printf }
 * (pthread_create and pthread_cancel are interposed, not recorded; pending:
 * no usleep); prints "CALL WHEN WHERE cancelled 1 cleanups 2". */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "hardening_common.h"

static volatile int sink;
static volatile int cleanups;
static int never_pipe[2]; /* never written: read() blocks */
static int use_read;
static int cancel_first;
static int call_here;
static atomic_int ready; /* the worker is about to call CALL */
static atomic_int go;    /* pending: the worker may call CALL */

NOINLINE void leaf(int x) {
  sink = x;
}

/* Large frames: below the stack pointers of `blocks` and `inner`. */
NOINLINE void inner_cleanup(void* arg) {
  volatile char pad[512];
  pad[0] = 0;
  leaf((int)(long)arg + pad[0]);
  ++cleanups;
}

NOINLINE void outer_cleanup(void* arg) {
  volatile char pad[1024];
  pad[0] = 0;
  leaf((int)(long)arg + pad[0]);
  ++cleanups;
}

/* Blocks in CALL until cancelled. Inlined where it is used. */
#define BLOCK_IN_CALL()                                              \
  do {                                                               \
    char byte;                                                       \
    /* No cancellation point from here to CALL (a spin, no call). */ \
    atomic_store(&ready, 1);                                         \
    while (cancel_first && !atomic_load(&go)) {                      \
    }                                                                \
    leaf(3);                                                         \
    if (use_read) {                                                  \
      sink = (int)read(never_pipe[0], &byte, 1);                     \
    } else {                                                         \
      usleep(10 * 1000 * 1000);                                      \
    }                                                                \
    leaf(-1); /* never: the thread is cancelled in the call above */ \
  } while (0)

NOINLINE void blocks(void) {
  BLOCK_IN_CALL();
}

NOINLINE void inner(void) {
  pthread_cleanup_push(inner_cleanup, (void*)2);
  if (call_here) {
    BLOCK_IN_CALL();
  } else {
    blocks();
  }
  pthread_cleanup_pop(0);
}

NOINLINE void outer(void) {
  pthread_cleanup_push(outer_cleanup, (void*)1);
  inner();
  pthread_cleanup_pop(0);
}

NOINLINE void* cancelled_worker(void* arg) {
  (void)arg;
  outer();
  return NULL;
}

NOINLINE int run_cancel(void) {
  pthread_t t;
  void* ret = NULL;
  HCHECK(pipe(never_pipe) == 0);
  HCHECK(pthread_create(&t, NULL, cancelled_worker, NULL) == 0);
  while (!atomic_load(&ready)) {
  }
  if (cancel_first) {
    HCHECK(pthread_cancel(t) == 0);
    atomic_store(&go, 1);
  } else {
    usleep(50 * 1000); /* the worker blocks in CALL meanwhile */
    HCHECK(pthread_cancel(t) == 0);
  }
  HCHECK(pthread_join(t, &ret) == 0);
  return ret == PTHREAD_CANCELED;
}

int main(int argc, char** argv) {
  HCHECK(argc == 4);
  HCHECK(strcmp(argv[1], "read") == 0 || strcmp(argv[1], "usleep") == 0);
  HCHECK(strcmp(argv[2], "blocked") == 0 || strcmp(argv[2], "pending") == 0);
  HCHECK(strcmp(argv[3], "deeper") == 0 || strcmp(argv[3], "here") == 0);
  use_read = strcmp(argv[1], "read") == 0;
  cancel_first = strcmp(argv[2], "pending") == 0;
  call_here = strcmp(argv[3], "here") == 0;
  const int cancelled = run_cancel();
  printf("%s %s %s cancelled %d cleanups %d\n", argv[1], argv[2], argv[3], cancelled, cleanups);
  return 0;
}
