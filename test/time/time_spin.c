/* An uninstrumented library for the time-axis fixture (time_axis_fixture.c):
 * spins on the clock, making no events, as a numerical library would. */
#include <time.h>

/* Spins for `ns` nanoseconds of CLOCK_MONOTONIC. */
void time_spin_ns(long long ns) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const long long start = ts.tv_sec * 1000000000LL + ts.tv_nsec;
  long long now = start;
  while (now - start < ns) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = ts.tv_sec * 1000000000LL + ts.tv_nsec;
  }
}
