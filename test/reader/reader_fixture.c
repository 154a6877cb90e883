/* Trace source for the reader robustness tests (test/reader).
 *
 * Built with -O0 -g -finstrument-functions and run under libparlotrt.so.
 * Two threads (main = thread index 0, worker = thread index 1) each make a
 * few thousand calls: a pseudo-random walk over 24 small functions (poorly
 * compressible, so a 4 KiB buffer gives many blocks), recursion, and a loop
 * of identical call sequences (long LZ matches).
 *
 * Every thread's event stream is the same in every run: the call sequence
 * depends only on a per-thread seed, and main calls every function once
 * before starting the worker, so function IDs are assigned in a fixed order
 * whatever the scheduling.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

volatile unsigned sink;

typedef unsigned (*leaf_fn)(unsigned);

#define LEAF(n)                            \
  NOINLINE unsigned leaf_##n(unsigned x) { \
    sink = x;                              \
    return x * 2654435761u + n;            \
  }
LEAF(0)
LEAF(1) LEAF(2) LEAF(3) LEAF(4) LEAF(5) LEAF(6) LEAF(7) LEAF(8) LEAF(9) LEAF(10) LEAF(11) LEAF(12)
    LEAF(13) LEAF(14) LEAF(15)

    /* Two-level calls: a mid function calls two leaves chosen from its input. */
    static leaf_fn const leaves[16] = {leaf_0,  leaf_1,  leaf_2,  leaf_3, leaf_4,  leaf_5,
                                       leaf_6,  leaf_7,  leaf_8,  leaf_9, leaf_10, leaf_11,
                                       leaf_12, leaf_13, leaf_14, leaf_15};

#define MID(n)                               \
  NOINLINE unsigned mid_##n(unsigned x) {    \
    unsigned a = leaves[(x >> 3) & 15](x);   \
    return a ^ leaves[(x >> 9) & 15](x + n); \
  }
MID(0)
MID(1) MID(2) MID(3) MID(4) MID(5) MID(6) MID(7)

    static leaf_fn const mids[8] = {mid_0, mid_1, mid_2, mid_3, mid_4, mid_5, mid_6, mid_7};

NOINLINE unsigned lcg(unsigned* state) {
  *state = *state * 1103515245u + 12345u;
  return *state >> 8;
}

/* Recursion: depth n, a leaf call at every level. */
NOINLINE unsigned recurse(unsigned n, unsigned x) {
  if (n == 0) return leaf_0(x);
  return leaf_1(x) + recurse(n - 1, x + 1);
}

/* The same short call sequence many times: long LZ matches. */
NOINLINE unsigned repeated(unsigned times) {
  unsigned acc = 0;
  for (unsigned i = 0; i < times; ++i) acc += leaf_2(i) + leaf_3(i) + mid_0(64);
  return acc;
}

NOINLINE unsigned random_walk(unsigned seed, unsigned steps) {
  unsigned acc = 0;
  for (unsigned i = 0; i < steps; ++i) {
    const unsigned r = lcg(&seed);
    if (r % 5 == 0) {
      acc += mids[(r >> 4) & 7](r);
    } else {
      acc += leaves[(r >> 4) & 15](r);
    }
  }
  return acc;
}

/* One thread's whole workload; scale 0 only visits the functions. */
NOINLINE unsigned work(unsigned seed, unsigned scale) {
  unsigned acc = random_walk(seed, 3000 * scale);
  acc += recurse(40 * scale, seed);
  acc += repeated(400 * scale);
  acc += random_walk(seed * 7u + 1u, 3000 * scale);
  acc += recurse(12 * scale, seed);
  return acc;
}

/* Calls every function once, so IDs do not depend on thread scheduling. */
NOINLINE void warm_up(void) {
  unsigned s = 1;
  for (unsigned i = 0; i < 16; ++i) leaves[i](i);
  for (unsigned i = 0; i < 8; ++i) mids[i](i);
  lcg(&s);
  work(1, 0);
}

NOINLINE void* worker_main(void* arg) {
  sink = work((unsigned)(uintptr_t)arg, 1);
  return NULL;
}

int main(void) {
  warm_up();
  pthread_t t;
  if (pthread_create(&t, NULL, worker_main, (void*)(uintptr_t)98765u) != 0) return 2;
  sink = work(12345u, 1);
  if (pthread_join(t, NULL) != 0) return 3;
  return 0;
}
