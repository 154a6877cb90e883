// Memory per traced thread (bench/run.sh processes): T threads each make
// C calls of a leaf function, then wait at a barrier until all have, so all
// of them are alive (with their traces) at the peak. Instrumented
// (-finstrument-functions); run with and without libparlotrt.so.
// Usage: thread_memory THREADS CALLS
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;
static pthread_barrier_t all_called;
static long calls;

__attribute__((noinline)) static void leaf(long i) {
  sink += (unsigned long)i;
}

static void* worker(void* arg) {
  for (long i = 0; i < calls; ++i) leaf(i);
  pthread_barrier_wait(&all_called);
  return arg;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s THREADS CALLS\n", argv[0]);
    return 2;
  }
  const long threads = atol(argv[1]);
  calls = atol(argv[2]);
  if (threads < 1 || threads > 4096 || calls < 0) return 2;
  pthread_t* t = calloc((size_t)threads, sizeof *t);
  if (t == NULL || pthread_barrier_init(&all_called, NULL, (unsigned)threads) != 0) return 1;
  for (long i = 0; i < threads; ++i) {
    if (pthread_create(&t[i], NULL, worker, NULL) != 0) return 1;
  }
  for (long i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  printf("%ld threads x %ld calls\n", threads, calls);
  free(t);
  return 0;
}
