/* What switching tracing on and off costs in a sled-built program: preload
 * this after the runtime,
 *
 *   PARLOT_START=off LD_PRELOAD="libparlotrt.so sled_switch_timer.so" PROGRAM ...
 *
 * (it is linked with libparlotrt.so, so the runtime's constructor has run
 * before its own). Before the program's main it calls parlot_start() and
 * parlot_stop() PARLOT_SWITCH_REPS times (default 20), each timed with
 * CLOCK_MONOTONIC, and prints on stderr one line:
 *
 *   sled_switch_timer: reps R on_us MEDIAN MIN off_us MEDIAN MIN
 *
 * microseconds per call: parlot_start() patches the sleds of every loaded
 * object, parlot_stop() turns them back into NOPs. Then the program runs
 * with tracing off. Built by bench/suites/sleds.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The runtime's (include/parlot/parlot.h): patch, unpatch every sled. */
int parlot_start(void);
int parlot_stop(void);

enum { kMaxReps = 1000 };

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

__attribute__((constructor)) static void time_switches(void) {
  static double on[kMaxReps], off[kMaxReps];
  const char* env = getenv("PARLOT_SWITCH_REPS");
  int reps = env != NULL ? atoi(env) : 20;
  if (reps < 1) reps = 1;
  if (reps > kMaxReps) reps = kMaxReps;
  for (int i = 0; i < reps; ++i) {
    double t = now_us();
    parlot_start();
    on[i] = now_us() - t;
    t = now_us();
    parlot_stop();
    off[i] = now_us() - t;
  }
  qsort(on, (size_t)reps, sizeof on[0], by_value);
  qsort(off, (size_t)reps, sizeof off[0], by_value);
  fprintf(stderr, "sled_switch_timer: reps %d on_us %.1f %.1f off_us %.1f %.1f\n", reps,
          on[reps / 2], on[0], off[reps / 2], off[0]);
}
