/* A program whose own malloc holds a lock (not recursive) while it runs
 * instrumented code, and whose first instrumented call happens there: main
 * is not instrumented, so the first event is inside malloc, called by
 * printf for the stdout buffer. Before the runtime started its idle-flusher
 * thread before main, that first event started it with pthread_create,
 * which allocates (calloc for the new thread's TLS): the program's calloc
 * then waited for the lock its own malloc held, forever.
 * Prints "allocations N". */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "hardening_common.h"

static _Alignas(64) unsigned char arena[1 << 22];
static size_t used;
static long allocations;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

NOINLINE static void count_allocation(void) {
  ++allocations;
}

NOTRACE static void* bump(size_t size) {
  pthread_mutex_lock(&lock);
  count_allocation(); /* instrumented, under the lock */
  const size_t start = (used + 15) & ~(size_t)15;
  void* p = NULL;
  if (start + size <= sizeof arena) {
    p = arena + start;
    used = start + size;
  }
  pthread_mutex_unlock(&lock);
  return p;
}

NOTRACE void* malloc(size_t size) {
  return bump(size);
}
NOTRACE void* calloc(size_t n, size_t size) {
  void* p = bump(n * size);
  if (p != NULL) memset(p, 0, n * size);
  return p;
}
NOTRACE void* realloc(void* old, size_t size) {
  void* p = bump(size);
  if (p != NULL && old != NULL) memcpy(p, old, size); /* the arena is large enough */
  return p;
}
NOTRACE void free(void* p) {
  (void)p;
}

NOTRACE int main(void) {
  printf("allocations %d\n", allocations > 0);
  return 0;
}
