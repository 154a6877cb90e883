/* The user API (include/parlot/parlot.h) in a small program with phases,
 * each opened by a mark (parlot_mark: every reader view shows it at its
 * place among the calls): a noisy set-up phase that is not worth tracing
 * (parlot_pause), the computation (traced), a flush once it is done
 * (parlot_flush, so its trace is on disk whatever happens next), and a
 * report phase. Linked with
 * libparlot-api.so: untraced it runs the same; under `parlot record` (or
 * LD_PRELOAD=libparlotrt.so) the runtime's definitions take over.
 * Usage: user_api [n] (default 1000)
 */
#include <parlot/parlot.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static unsigned table[1 << 12];

NOINLINE static unsigned scramble(unsigned x) {
  x ^= x << 13;
  x ^= x >> 17;
  return x ^ (x << 5);
}

/* Set-up: one call per table entry; paused, so none of them is recorded. */
NOINLINE static void fill_table(void) {
  for (unsigned i = 0; i < sizeof table / sizeof table[0]; ++i) table[i] = scramble(i + 1);
}

NOINLINE static unsigned step(unsigned acc, unsigned i) {
  return acc * 31u + table[i % (sizeof table / sizeof table[0])];
}

NOINLINE static unsigned compute(unsigned n) {
  unsigned acc = 0;
  for (unsigned i = 0; i < n; ++i) acc = step(acc, i);
  return acc;
}

NOINLINE static void report(unsigned result, int flushed) {
  printf("user_api result %u (traced %d, flush %d)\n", result, parlot_is_tracing(), flushed);
}

int main(int argc, char** argv) {
  const unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000;
  parlot_mark("set-up");
  parlot_pause();
  fill_table();
  parlot_resume();
  parlot_mark("compute");
  const unsigned result = compute(n);
  const int flushed = parlot_flush();
  parlot_mark("report");
  report(result, flushed);
  return 0;
}
