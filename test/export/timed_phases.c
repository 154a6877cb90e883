/* Fixture of the time-axis test (export_consumer_test,
 * DefaultTimeAxisPlacesMillisecondCallsWithinTenPercent): calls of known
 * length, full of short calls, between bursts of calls at another rate.
 * For each phase() call prints two numbers (ns, CLOCK_MONOTONIC): its length
 * as the program measured it, and the time the program lost to stalls
 * (preemption: gaps over 20 us between its frequent clock reads) from the
 * burst before the call to the burst after it. The reader interpolates
 * between clock samples, so a stall inside a sample interval moves the
 * events of that interval by up to its length: the test allows for it.
 * Build with -finstrument-functions. */
#include <stdio.h>
#include <time.h>

static long long last_read;
static long long stalled_ns;

/* CLOCK_MONOTONIC in ns; adds gaps over 20 us since the last read to
 * stalled_ns. */
__attribute__((no_instrument_function)) static long long clock_read(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const long long t = ts.tv_sec * 1000000000LL + ts.tv_nsec;
  if (last_read != 0 && t - last_read > 20000) stalled_ns += t - last_read;
  last_read = t;
  return t;
}

__attribute__((noinline)) long long tick(long long x) {
  return x * 2 + 1;
}

/* Calls tick() until `ns` have passed. */
__attribute__((noinline)) void phase(long long ns, volatile long long* sink) {
  const long long start = clock_read();
  while (clock_read() - start < ns) *sink += tick(*sink);
}

/* `n` calls of tick(), as fast as they go (a clock read every 16). */
__attribute__((noinline)) void burst(int n, volatile long long* sink) {
  for (int i = 0; i < n; ++i) {
    *sink += tick(i);
    if (i % 16 == 0) clock_read();
  }
}

int main(void) {
  volatile long long sink = 0;
  enum { kPhases = 6 };
  long long length[kPhases], stall_from[kPhases + 1];
  burst(20000, &sink);
  for (int k = 0; k < kPhases; ++k) {
    stall_from[k] = stalled_ns; /* before the burst before phase k */
    const long long before = clock_read();
    phase((k % 3 + 1) * 1000000LL, &sink); /* 1, 2, 3 ms */
    length[k] = clock_read() - before;
    burst(20000, &sink);
  }
  stall_from[kPhases] = stalled_ns;
  for (int k = 0; k < kPhases; ++k) {
    /* Stalls in the burst before phase k, in it, and in the burst after. */
    const long long from = k == 0 ? 0 : stall_from[k - 1];
    printf("%lld %lld\n", length[k], stall_from[k + 1] - from);
  }
  return 0;
}
