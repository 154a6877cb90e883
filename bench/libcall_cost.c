/* Cost of one traced library call (PARLOT_LIBCALLS): main (instrumented)
   calls parlot_bench_callee in libparlot_bench_callee.so (not instrumented)
   through the PLT N times and prints "<ns per call, wall> <ns per call,
   process CPU>". Run it bare (glibc's no-op hooks), under the runtime with
   and without PARLOT_LIBCALLS=1, under an LD_AUDIT module
   (libparlot_bench_audit.so) and under uftrace: bench/run.sh libcalls.
   Usage: libcall_cost [calls] (default 10,000,000). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int parlot_bench_callee(int x);

static double clock_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const long calls = argc > 1 ? atol(argv[1]) : 10000000L;
  int sum = 0;
  parlot_bench_callee(0); /* bound before timing (lazy binding) */
  const double w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  for (long i = 0; i < calls; ++i) sum = parlot_bench_callee(sum);
  const double w1 = clock_ns(CLOCK_MONOTONIC), c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  printf("%.2f %.2f\n", (w1 - w0) / (double)calls, (c1 - c0) / (double)calls);
  return sum == (int)calls ? 0 : 1;
}
