/* Fixture of the time-axis tests (time_axis_test.cpp): calls of known length
 * whose time passes without events, each timed by the program itself with
 * CLOCK_MONOTONIC around the call. Prints one line per timed call, "name
 * ns", in call order:
 *   sleep_leaf  a leaf that blocks in nanosleep for 200 ms
 *   tiny_calls  3,000 calls of tiny(), right after it (well under 20 ms)
 *   spin_caller an instrumented function spinning 150 ms in an
 *               uninstrumented library (time_spin.c)
 *   slice       with argument "contend": 40 calls of 5 ms (wall clock)
 *               full of short calls, on a CPU shared with three threads
 *               that spin (uninstrumented): the OS deschedules the calling
 *               thread for milliseconds at a time
 * Build with -finstrument-functions; time_spin.c without. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void time_spin_ns(long long ns);

__attribute__((no_instrument_function)) static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile long long sink;

__attribute__((noinline)) void tiny(int i) {
  sink += i;
}

__attribute__((noinline)) void sleep_leaf(void) {
  const struct timespec d = {0, 200 * 1000 * 1000};
  nanosleep(&d, NULL);
}

__attribute__((noinline)) void tiny_calls(void) {
  for (int i = 0; i < 3000; ++i) tiny(i);
}

__attribute__((noinline)) void spin_caller(void) {
  time_spin_ns(150LL * 1000 * 1000);
}

/* Short calls, about one a microsecond, until 5 ms have passed. */
__attribute__((noinline)) void slice(void) {
  const long long start = now_ns();
  for (int i = 0; now_ns() - start < 5LL * 1000 * 1000; ++i) {
    tiny(i);
    for (int j = 0; j < 16; ++j) now_ns();
  }
}

static volatile int spinning = 1;

__attribute__((no_instrument_function)) static void* spinner(void* arg) {
  (void)arg;
  while (spinning) {
  }
  return NULL;
}

#define TIMED(call)                                 \
  do {                                              \
    const long long before_ = now_ns();             \
    call();                                         \
    printf("%s %lld\n", #call, now_ns() - before_); \
  } while (0)

int main(int argc, char** argv) {
  TIMED(sleep_leaf);
  TIMED(tiny_calls);
  TIMED(spin_caller);
  if (argc > 1 && strcmp(argv[1], "contend") == 0) {
    /* This thread and three spinners on CPU 0 (the runtime's flusher, started
     * before main, is not pinned). */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return 1;
    pthread_t spinners[3];
    for (int i = 0; i < 3; ++i) pthread_create(&spinners[i], NULL, spinner, NULL);
    for (int k = 0; k < 40; ++k) TIMED(slice);
    spinning = 0;
    for (int i = 0; i < 3; ++i) pthread_join(spinners[i], NULL);
  }
  return 0;
}
