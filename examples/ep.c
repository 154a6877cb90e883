// Parlot example: embarrassingly parallel kernel in the style of NAS EP (C).
//
// Usage: ep [m]     (default: 12)
//
// Generates 2^m pairs of uniform deviates from the NAS linear congruential
// generator (x <- 5^13 x mod 2^46, seed 271828183: NAS randlc/vranlc) and
// turns them into Gaussian pairs with the Marsaglia polar method: a pair
// (x1, x2) of uniforms on [-1, 1) with t = x1^2 + x2^2 <= 1 gives the
// independent normals x1 sqrt(-2 ln t / t) and x2 sqrt(-2 ln t / t). The
// accepted pairs are counted into NQ (10) square annuli by the larger of
// their absolute values, and their sums sx and sy are accumulated.
//
// As in NAS EP, the stream is cut into batches of NK pairs; each batch finds
// its own starting seed by binary jump-ahead (batch_seed), fills its 2 NK
// uniforms (vranlc) and transforms them (gaussian_batch). NAS uses batches of
// 2^16 pairs; here they have NK = 16, so that the calls are as dense as in
// the other examples. The random stream is the same as NAS EP's for any batch
// size, so m = 24 and m = 25 reproduce the NAS class S and W verification
// values (sx, sy, and the number of accepted pairs). Single-threaded and
// deterministic.
//
// Built with -DPARLOT_EXAMPLE_MPI it is an MPI program: the batches are split
// into one contiguous block per rank and the sums and counts are combined
// with MPI_Allreduce. Rank 0 prints the line.
//
// Output (one line):
//   ep m=<m> pairs=<2^m> accepted=<count> q=<q0>,...,<q9> sx=<e> sy=<e>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define KERNEL_NAME "ep"
#include "kernel_main.h"

enum { MK = 4, NK = 1 << MK, NQ = 10, MAX_M = 40 };
static const uint64_t LCG_A = 1220703125ULL;  // 5^13, NAS's multiplier
static const uint64_t SEED = 271828183ULL;    // NAS EP's seed
static const uint64_t MASK46 = (1ULL << 46) - 1;

typedef struct {
  double sx, sy;
  long q[NQ];
} Tally;

// ---- NAS pseudo-random numbers ------------------------------------------------

// NAS randlc: x <- a x mod 2^46; returns x / 2^46. The low 46 bits of the
// 64-bit wrapped product are exact, so this equals NAS's split-double form.
static double randlc(uint64_t* x, uint64_t a) {
  *x = (*x * a) & MASK46;
  return (double)*x * 0x1.0p-46;
}

// NAS vranlc: the next n values of the stream into y.
static void vranlc(long n, uint64_t* x, uint64_t a, double* y) {
  uint64_t s = *x;
  for (long i = 0; i < n; ++i) {
    s = (s * a) & MASK46;
    y[i] = (double)s * 0x1.0p-46;
  }
  *x = s;
}

// The multiplier that advances the stream by one batch, a^(2 NK), by MK + 1
// squarings (as NAS EP computes `an`).
static uint64_t batch_multiplier(void) {
  uint64_t an = LCG_A;
  for (int i = 0; i <= MK; ++i) randlc(&an, an);
  return an;
}

// Seed of batch k: SEED * an^k mod 2^46 by binary jump-ahead (NAS EP's
// loop, with randlc's arithmetic written out).
static uint64_t batch_seed(long k, uint64_t an) {
  uint64_t t1 = SEED, t2 = an;
  for (long kk = k; kk != 0; kk /= 2) {
    if (kk % 2 != 0) t1 = (t1 * t2) & MASK46;
    t2 = (t2 * t2) & MASK46;
  }
  return t1;
}

// ---- Gaussian deviates ------------------------------------------------------

// Marsaglia polar method on NK pairs of uniforms in [0, 1).
static void gaussian_batch(const double* x, Tally* t) {
  for (int i = 0; i < NK; ++i) {
    double x1 = 2.0 * x[2 * i] - 1.0;
    double x2 = 2.0 * x[2 * i + 1] - 1.0;
    double t1 = x1 * x1 + x2 * x2;
    if (t1 > 1.0) continue;  // outside the unit disc: rejected
    // t1 > 0: the uniforms are odd multiples of 2^-46, never exactly 1/2.
    double t2 = sqrt(-2.0 * log(t1) / t1);
    double t3 = x1 * t2;
    double t4 = x2 * t2;
    int l = (int)fmax(fabs(t3), fabs(t4));
    if (l < NQ) ++t->q[l];  // l >= 10 has probability ~1e-23
    t->sx += t3;
    t->sy += t4;
  }
}

// Batches [first, last) into t.
static void ep_kernel(long first, long last, Tally* t) {
  double x[2 * NK];
  uint64_t an = batch_multiplier();
  for (long k = first; k < last; ++k) {
    uint64_t seed = batch_seed(k, an);
    vranlc(2 * NK, &seed, LCG_A, x);
    gaussian_batch(x, t);
  }
}

static int run(int argc, char** argv) {
  long m = 12;
  if (argc > 2) {
    if (my_rank == 0) fprintf(stderr, "usage: ep [m]\n");
    return 2;
  }
  if (argc > 1 && !parse_long(argv[1], "m", MK, MAX_M, &m)) return 2;

  long batches = 1L << (m - MK);
  // This rank's contiguous block of batches.
  long first = batches * my_rank / num_ranks;
  long last = batches * (my_rank + 1) / num_ranks;
  Tally t = {0.0, 0.0, {0}};
  ep_kernel(first, last, &t);
#ifdef PARLOT_EXAMPLE_MPI
  MPI_Allreduce(MPI_IN_PLACE, &t.sx, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &t.sy, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, t.q, NQ, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
#endif

  long accepted = 0;
  for (int i = 0; i < NQ; ++i) accepted += t.q[i];
  if (my_rank == 0) {
    printf("ep m=%ld pairs=%ld accepted=%ld q=", m, 1L << m, accepted);
    for (int i = 0; i < NQ; ++i) printf(i == 0 ? "%ld" : ",%ld", t.q[i]);
    printf(" sx=%.10e sy=%.10e\n", t.sx, t.sy);
  }
  return 0;
}
