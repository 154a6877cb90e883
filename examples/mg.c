// Parlot example: multigrid kernel in the style of NAS MG (C).
//
// Usage: mg [n] [iterations]     (defaults: 8 2; n a power of two >= 4)
//
// NAS MG's V-cycle multigrid for the 3-D Poisson equation on an n^3 grid
// with periodic boundaries. The right-hand side v is zero except for +1 at
// the 10 largest and -1 at the 10 smallest of n^3 uniforms from the NAS
// linear congruential generator (x <- 5^13 x mod 2^46, seed 314159265: zran3).
// Each of the `iterations` steps runs one V-cycle (mg3P) and recomputes the
// residual r = v - A u (resid). Down the V: restriction of the residual to
// the next coarser grid (rprj3). At the coarsest grid (2^3): the smoother
// (psinv). Up the V: trilinear prolongation of the correction (interp), the
// residual and the smoother on every finer grid. resid, psinv and rprj3 end
// with the periodic boundary exchange (comm3); the result is the residual's
// L2 norm and maximum norm (norm2u3). The operators and coefficients are NAS
// MG's (class S and W smoother), so `mg 32 4` and `mg 128 4` are NAS classes
// S and W and reproduce their verification values rnm2 = 5.307707005734e-05
// and 6.467329375339e-06.
//
// The operators work row by row (resid_row, psinv_row, rprj3_row,
// interp_row) and plane by plane (comm3_plane, random_plane,
// plane_extremes, plane_norms), like hand-written stencil code.
// Single-threaded and deterministic.
//
// Built with -DPARLOT_EXAMPLE_MPI it is an MPI program (the number of ranks
// must be a power of two, at most n/2): every grid with at least two planes
// per rank is split into one contiguous block of z planes per rank, and comm3
// exchanges the ghost planes with the neighbouring ranks (MPI_Sendrecv). The
// coarser grids are computed whole on every rank, gathered after the
// restriction (MPI_Allgather). The norms are combined with MPI_Allreduce.
// Rank 0 prints the line, which equals the serial program's (the grids are
// bit-identical; only the order of the sum in rnm2 differs).
//
// Output (one line): mg n=<n> iterations=<k> rnm2=<e> rnmu=<e>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_NAME "mg"
#include "kernel_main.h"

enum { MAX_LEVELS = 12, EXTREMES = 10 };
static const uint64_t LCG_A = 1220703125ULL;  // 5^13, NAS's multiplier
static const uint64_t SEED = 314159265ULL;    // NAS MG's seed
static const uint64_t MASK46 = (1ULL << 46) - 1;

// NAS MG's residual operator A and smoother S (classes S and W).
static const double A[4] = {-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0};
static const double C[4] = {-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0};

// One grid of the hierarchy as this rank stores it: all of x and y with one
// ghost layer on each side (m1 = m2 = n + 2), and planes z0 .. z0 + m3 - 1
// of the global ghost-inclusive z range 0 .. n + 1.
typedef struct {
  long n;           // interior points per dimension (2^level)
  long m1, m2, m3;  // stored points per dimension
  long z0;          // global z index of stored plane 0
  int distributed;  // interior planes split over the ranks (else all here)
} Level;

typedef struct {
  double value;
  long position;  // global ghost-inclusive (z * m2 + y) * m1 + x
} Extreme;

// Row work arrays, as long as the finest grid's rows.
static double *work1, *work2, *work3;

static long plane_size(const Level* l) {
  return l->m1 * l->m2;
}

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

// a^n mod 2^46 by binary powering (NAS power), to jump ahead n steps.
static uint64_t lcg_power(uint64_t a, long n) {
  uint64_t result = 1, square = a;
  for (; n != 0; n /= 2) {
    if (n % 2 != 0) randlc(&result, square);
    randlc(&square, square);
  }
  return result;
}

// ---- Periodic boundaries ---------------------------------------------------------

// x and y ghosts of plane p.
static void comm3_plane(double* p, long m1, long m2) {
  for (long i2 = 1; i2 < m2 - 1; ++i2) {
    double* row = p + i2 * m1;
    row[0] = row[m1 - 2];
    row[m1 - 1] = row[1];
  }
  memcpy(p, p + (m2 - 2) * m1, (size_t)m1 * sizeof *p);
  memcpy(p + (m2 - 1) * m1, p + m1, (size_t)m1 * sizeof *p);
}

// NAS comm3: fills the ghost layers of u from the periodic interior.
static void comm3(const Level* l, double* u) {
  long plane = plane_size(l);
  for (long i3 = 1; i3 < l->m3 - 1; ++i3) comm3_plane(u + i3 * plane, l->m1, l->m2);
  double* bottom = u + plane;               // first interior plane here
  double* top = u + (l->m3 - 2) * plane;    // last interior plane here
  double* below = u;                        // ghost below
  double* above = u + (l->m3 - 1) * plane;  // ghost above
#ifdef PARLOT_EXAMPLE_MPI
  if (l->distributed) {
    int up = (my_rank + 1) % num_ranks, down = (my_rank + num_ranks - 1) % num_ranks;
    MPI_Sendrecv(top, (int)plane, MPI_DOUBLE, up, 0, below, (int)plane, MPI_DOUBLE, down, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(bottom, (int)plane, MPI_DOUBLE, down, 1, above, (int)plane, MPI_DOUBLE, up, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return;
  }
#endif
  memcpy(below, top, (size_t)plane * sizeof *u);
  memcpy(above, bottom, (size_t)plane * sizeof *u);
}

static void zero3(const Level* l, double* u) {
  memset(u, 0, (size_t)(plane_size(l) * l->m3) * sizeof *u);
}

// ---- Operators ----------------------------------------------------------------------
// Row functions get pointers to the row's first point; `ny` and `nz` are the
// strides to the next row and the next plane.

// r = v - A u on one row (NAS resid; v may be r).
static void resid_row(const double* u, const double* v, double* r, long n1, long ny, long nz) {
  double* u1 = work1;
  double* u2 = work2;
  for (long i1 = 0; i1 < n1; ++i1) {
    u1[i1] = u[i1 - ny] + u[i1 + ny] + u[i1 - nz] + u[i1 + nz];
    u2[i1] = u[i1 - nz - ny] + u[i1 - nz + ny] + u[i1 + nz - ny] + u[i1 + nz + ny];
  }
  for (long i1 = 1; i1 < n1 - 1; ++i1) {
    r[i1] = v[i1] - A[0] * u[i1] - A[2] * (u2[i1] + u1[i1 - 1] + u1[i1 + 1]) -
            A[3] * (u2[i1 - 1] + u2[i1 + 1]);
  }
}

static void resid(const Level* l, const double* u, const double* v, double* r) {
  long plane = plane_size(l);
  for (long i3 = 1; i3 < l->m3 - 1; ++i3) {
    for (long i2 = 1; i2 < l->m2 - 1; ++i2) {
      long at = i3 * plane + i2 * l->m1;
      resid_row(u + at, v + at, r + at, l->m1, l->m1, plane);
    }
  }
  comm3(l, r);
}

// u = u + S r on one row (NAS psinv).
static void psinv_row(const double* r, double* u, long n1, long ny, long nz) {
  double* r1 = work1;
  double* r2 = work2;
  for (long i1 = 0; i1 < n1; ++i1) {
    r1[i1] = r[i1 - ny] + r[i1 + ny] + r[i1 - nz] + r[i1 + nz];
    r2[i1] = r[i1 - nz - ny] + r[i1 - nz + ny] + r[i1 + nz - ny] + r[i1 + nz + ny];
  }
  for (long i1 = 1; i1 < n1 - 1; ++i1) {
    u[i1] = u[i1] + C[0] * r[i1] + C[1] * (r[i1 - 1] + r[i1 + 1] + r1[i1]) +
            C[2] * (r2[i1] + r1[i1 - 1] + r1[i1 + 1]);
  }
}

static void psinv(const Level* l, const double* r, double* u) {
  long plane = plane_size(l);
  for (long i3 = 1; i3 < l->m3 - 1; ++i3) {
    for (long i2 = 1; i2 < l->m2 - 1; ++i2) {
      long at = i3 * plane + i2 * l->m1;
      psinv_row(r + at, u + at, l->m1, l->m1, plane);
    }
  }
  comm3(l, u);
}

// One coarse row s of the full-weighting restriction of r (NAS rprj3): r
// points at fine row (2 j3 - 1, 2 j2 - 1), whose 3 x 3 plane-row
// neighbourhood (offsets 0, 1, 2) feeds the coarse row.
static void rprj3_row(const double* r, double* s, long m1j, long ny, long nz) {
  double* x1 = work1;
  double* y1 = work2;
  for (long j1 = 1; j1 < m1j; ++j1) {
    long i1 = 2 * j1 - 1;
    x1[i1] = r[nz + i1] + r[nz + 2 * ny + i1] + r[ny + i1] + r[2 * nz + ny + i1];
    y1[i1] = r[i1] + r[2 * nz + i1] + r[2 * ny + i1] + r[2 * nz + 2 * ny + i1];
  }
  for (long j1 = 1; j1 < m1j - 1; ++j1) {
    long i1 = 2 * j1 - 1;
    double y2 = r[i1 + 1] + r[2 * nz + i1 + 1] + r[2 * ny + i1 + 1] + r[2 * nz + 2 * ny + i1 + 1];
    double x2 = r[nz + i1 + 1] + r[nz + 2 * ny + i1 + 1] + r[ny + i1 + 1] + r[2 * nz + ny + i1 + 1];
    s[j1] = 0.5 * r[nz + ny + i1 + 1] + 0.25 * (r[nz + ny + i1] + r[nz + ny + i1 + 2] + x2) +
            0.125 * (x1[i1] + x1[i1 + 2] + y2) + 0.0625 * (y1[i1] + y1[i1 + 2]);
  }
}

// The stored coarse planes that correspond to this rank's fine planes: the
// coarse array's offset (in doubles) and number of planes.
static long coarse_view(const Level* fine, const Level* coarse, long* m3) {
  long z0 = fine->z0 / 2;  // stored fine planes start at an even global plane
  *m3 = (fine->m3 - 2) / 2 + 2;
  return (z0 - coarse->z0) * plane_size(coarse);
}

// s (coarse) = restriction of r (fine).
static void rprj3(const Level* fine, const double* r, const Level* coarse, double* s) {
  long m3j;
  double* view = s + coarse_view(fine, coarse, &m3j);
  long plane_k = plane_size(fine), plane_j = plane_size(coarse);
  for (long j3 = 1; j3 < m3j - 1; ++j3) {
    for (long j2 = 1; j2 < coarse->m2 - 1; ++j2) {
      rprj3_row(r + (2 * j3 - 1) * plane_k + (2 * j2 - 1) * fine->m1,
                view + j3 * plane_j + j2 * coarse->m1, coarse->m1, fine->m1, plane_k);
    }
  }
#ifdef PARLOT_EXAMPLE_MPI
  if (fine->distributed && !coarse->distributed) {
    // Every rank computed its share of the interior planes: gather them all.
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s + plane_j, (int)((m3j - 2) * plane_j),
                  MPI_DOUBLE, MPI_COMM_WORLD);
  }
#endif
  comm3(coarse, s);
}

// Adds the trilinear interpolation of coarse row z (i3, i2) to the fine rows
// (2 i3 .. 2 i3 + 1, 2 i2 .. 2 i2 + 1) starting at u (NAS interp).
static void interp_row(const double* z, double* u, long mm1, long zy, long zz, long uy, long uz) {
  double* z1 = work1;
  double* z2 = work2;
  double* z3 = work3;
  for (long i1 = 0; i1 < mm1; ++i1) {
    z1[i1] = z[zy + i1] + z[i1];
    z2[i1] = z[zz + i1] + z[i1];
    z3[i1] = z[zz + zy + i1] + z[zz + i1] + z1[i1];
  }
  for (long i1 = 0; i1 < mm1 - 1; ++i1) {
    u[2 * i1] = u[2 * i1] + z[i1];
    u[2 * i1 + 1] = u[2 * i1 + 1] + 0.5 * (z[i1 + 1] + z[i1]);
  }
  for (long i1 = 0; i1 < mm1 - 1; ++i1) {
    u[uy + 2 * i1] = u[uy + 2 * i1] + 0.5 * z1[i1];
    u[uy + 2 * i1 + 1] = u[uy + 2 * i1 + 1] + 0.25 * (z1[i1] + z1[i1 + 1]);
  }
  for (long i1 = 0; i1 < mm1 - 1; ++i1) {
    u[uz + 2 * i1] = u[uz + 2 * i1] + 0.5 * z2[i1];
    u[uz + 2 * i1 + 1] = u[uz + 2 * i1 + 1] + 0.25 * (z2[i1] + z2[i1 + 1]);
  }
  for (long i1 = 0; i1 < mm1 - 1; ++i1) {
    u[uz + uy + 2 * i1] = u[uz + uy + 2 * i1] + 0.25 * z3[i1];
    u[uz + uy + 2 * i1 + 1] = u[uz + uy + 2 * i1 + 1] + 0.125 * (z3[i1] + z3[i1 + 1]);
  }
}

// u (fine) += prolongation of z (coarse), ghost planes included.
static void interp(const Level* coarse, const double* z, const Level* fine, double* u) {
  long mm3;
  const double* view = z + coarse_view(fine, coarse, &mm3);
  long plane_j = plane_size(coarse), plane_k = plane_size(fine);
  for (long i3 = 0; i3 < mm3 - 1; ++i3) {
    for (long i2 = 0; i2 < coarse->m2 - 1; ++i2) {
      interp_row(view + i3 * plane_j + i2 * coarse->m1, u + 2 * i3 * plane_k + 2 * i2 * fine->m1,
                 coarse->m1, coarse->m1, plane_j, fine->m1, plane_k);
    }
  }
}

// ---- Norms and the right-hand side ---------------------------------------------

static void plane_norms(const double* p, long m1, long m2, double* sum, double* max) {
  for (long i2 = 1; i2 < m2 - 1; ++i2) {
    for (long i1 = 1; i1 < m1 - 1; ++i1) {
      double x = p[i2 * m1 + i1];
      *sum += x * x;
      if (fabs(x) > *max) *max = fabs(x);
    }
  }
}

// NAS norm2u3: the L2 norm (root mean square) and the maximum norm of r.
static void norm2u3(const Level* l, const double* r, double* rnm2, double* rnmu) {
  double sum = 0.0, max = 0.0;
  for (long i3 = 1; i3 < l->m3 - 1; ++i3) {
    plane_norms(r + i3 * plane_size(l), l->m1, l->m2, &sum, &max);
  }
#ifdef PARLOT_EXAMPLE_MPI
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
  *rnm2 = sqrt(sum / ((double)l->n * (double)l->n * (double)l->n));
  *rnmu = max;
}

// Uniforms into the interior of plane p: row by row, each row continuing the
// stream at x0 * a^(row * nx) (NAS zran3).
static void random_plane(double* p, long m1, long m2, uint64_t x0, uint64_t a1) {
  uint64_t x1 = x0;
  for (long i2 = 1; i2 < m2 - 1; ++i2) {
    uint64_t xx = x1;
    vranlc(m1 - 2, &xx, LCG_A, p + i2 * m1 + 1);
    randlc(&x1, a1);
  }
}

// Inserts (value, position) into the list of the EXTREMES largest (sign 1,
// kept ascending) or smallest (sign -1, kept descending) values, if it
// belongs there (beyond list[0]).
static void insert_extreme(Extreme* list, int sign, double value, long position) {
  int i = 0;
  for (; i + 1 < EXTREMES && sign * value > sign * list[i + 1].value; ++i) list[i] = list[i + 1];
  list[i].value = value;
  list[i].position = position;
}

static void plane_extremes(const double* p, long m1, long m2, long global_z, Extreme* big,
                           Extreme* small) {
  for (long i2 = 1; i2 < m2 - 1; ++i2) {
    for (long i1 = 1; i1 < m1 - 1; ++i1) {
      double x = p[i2 * m1 + i1];
      long position = (global_z * m2 + i2) * m1 + i1;
      if (x > big[0].value) insert_extreme(big, 1, x, position);
      if (x < small[0].value) insert_extreme(small, -1, x, position);
    }
  }
}

#ifdef PARLOT_EXAMPLE_MPI
// Every rank's candidates, merged into the global extremes.
static void merge_extremes(Extreme* list, int sign) {
  double mine[2 * EXTREMES];
  for (int i = 0; i < EXTREMES; ++i) {
    mine[2 * i] = list[i].value;
    mine[2 * i + 1] = (double)list[i].position;  // exact below 2^53
  }
  double* all = malloc((size_t)num_ranks * 2 * EXTREMES * sizeof *all);
  MPI_Allgather(mine, 2 * EXTREMES, MPI_DOUBLE, all, 2 * EXTREMES, MPI_DOUBLE, MPI_COMM_WORLD);
  for (int i = 0; i < EXTREMES; ++i) list[i].value = sign > 0 ? 0.0 : 1.0;
  for (long i = 0; i < (long)num_ranks * EXTREMES; ++i) {
    if (sign * all[2 * i] > sign * list[0].value) {
      insert_extreme(list, sign, all[2 * i], (long)all[2 * i + 1]);
    }
  }
  free(all);
}
#endif

static void set_point(const Level* l, double* z, long position, double value) {
  long global_z = position / plane_size(l);
  if (global_z > l->z0 && global_z < l->z0 + l->m3 - 1) {
    z[position - l->z0 * plane_size(l)] = value;
  }
}

// NAS zran3: z = +1 at the EXTREMES largest and -1 at the EXTREMES smallest
// of the random values of the interior points, 0 elsewhere.
static void zran3(const Level* l, double* z) {
  long nx = l->n, plane = plane_size(l);
  uint64_t a1 = lcg_power(LCG_A, nx), a2 = lcg_power(LCG_A, nx * nx);
  uint64_t x0 = SEED;
  randlc(&x0, lcg_power(LCG_A, nx * nx * l->z0));  // this rank's first plane
  zero3(l, z);
  Extreme big[EXTREMES], small[EXTREMES];
  for (int i = 0; i < EXTREMES; ++i) {
    big[i] = (Extreme){0.0, 0};
    small[i] = (Extreme){1.0, 0};
  }
  for (long i3 = 1; i3 < l->m3 - 1; ++i3) {
    random_plane(z + i3 * plane, l->m1, l->m2, x0, a1);
    plane_extremes(z + i3 * plane, l->m1, l->m2, l->z0 + i3, big, small);
    randlc(&x0, a2);
  }
#ifdef PARLOT_EXAMPLE_MPI
  merge_extremes(big, 1);
  merge_extremes(small, -1);
#endif
  zero3(l, z);
  for (int i = 0; i < EXTREMES; ++i) set_point(l, z, small[i].position, -1.0);
  for (int i = 0; i < EXTREMES; ++i) set_point(l, z, big[i].position, 1.0);
  comm3(l, z);
}

// ---- The V-cycle --------------------------------------------------------------------

// NAS mg3P: one V-cycle from the finest level lt down to level 1 and back.
static void mg3P(const Level* levels, int lt, double** u, const double* v, double** r) {
  for (int k = lt; k > 1; --k) rprj3(&levels[k], r[k], &levels[k - 1], r[k - 1]);
  zero3(&levels[1], u[1]);
  psinv(&levels[1], r[1], u[1]);
  for (int k = 2; k < lt; ++k) {
    zero3(&levels[k], u[k]);
    interp(&levels[k - 1], u[k - 1], &levels[k], u[k]);
    resid(&levels[k], u[k], r[k], r[k]);
    psinv(&levels[k], r[k], u[k]);
  }
  interp(&levels[lt - 1], u[lt - 1], &levels[lt], u[lt]);
  resid(&levels[lt], u[lt], v, r[lt]);
  psinv(&levels[lt], r[lt], u[lt]);
}

// Levels 1 .. lt (2^k interior points per dimension), split over the ranks
// where they have at least two planes per rank.
static void setup_levels(Level* levels, int lt) {
  for (int k = 1; k <= lt; ++k) {
    Level* l = &levels[k];
    l->n = 1L << k;
    l->m1 = l->n + 2;
    l->m2 = l->n + 2;
    l->distributed = l->n >= 2L * num_ranks;
    long lo = 0, hi = l->n;
    if (l->distributed) {
      lo = l->n * my_rank / num_ranks;
      hi = l->n * (my_rank + 1) / num_ranks;
    }
    l->z0 = lo;
    l->m3 = hi - lo + 2;
  }
}

static int run(int argc, char** argv) {
  long n = 8, iterations = 2;
  if (argc > 3) {
    if (my_rank == 0) fprintf(stderr, "usage: mg [n] [iterations]\n");
    return 2;
  }
  if (argc > 1 && !parse_long(argv[1], "n", 4, 1L << (MAX_LEVELS - 1), &n)) return 2;
  if (argc > 2 && !parse_long(argv[2], "iterations", 1, 1000000L, &iterations)) return 2;
  int lt = 0;
  while ((1L << lt) < n) ++lt;
  if ((1L << lt) != n) {
    if (my_rank == 0) fprintf(stderr, "mg: n must be a power of two\n");
    return 2;
  }
  if ((num_ranks & (num_ranks - 1)) != 0 || n < 2L * num_ranks) {
    if (my_rank == 0) fprintf(stderr, "mg: the ranks must be a power of two, at most n/2\n");
    return 2;
  }

  Level levels[MAX_LEVELS];
  setup_levels(levels, lt);
  double* u[MAX_LEVELS] = {NULL};
  double* r[MAX_LEVELS] = {NULL};
  int ok = 1;
  for (int k = 1; k <= lt; ++k) {
    size_t points = (size_t)(plane_size(&levels[k]) * levels[k].m3);
    u[k] = malloc(points * sizeof(double));
    r[k] = malloc(points * sizeof(double));
    ok = ok && u[k] && r[k];
  }
  double* v = malloc((size_t)(plane_size(&levels[lt]) * levels[lt].m3) * sizeof *v);
  work1 = malloc((size_t)levels[lt].m1 * sizeof *work1);
  work2 = malloc((size_t)levels[lt].m1 * sizeof *work2);
  work3 = malloc((size_t)levels[lt].m1 * sizeof *work3);
  if (!ok || !v || !work1 || !work2 || !work3) {
    fprintf(stderr, "mg: out of memory for n=%ld\n", n);
#ifdef PARLOT_EXAMPLE_MPI
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    return 1;
  }

  const Level* top = &levels[lt];
  zero3(top, u[lt]);
  zran3(top, v);
  resid(top, u[lt], v, r[lt]);
  double rnm2, rnmu;
  norm2u3(top, r[lt], &rnm2, &rnmu);  // the initial residual, as in NAS MG
  for (long it = 0; it < iterations; ++it) {
    mg3P(levels, lt, u, v, r);
    resid(top, u[lt], v, r[lt]);
  }
  norm2u3(top, r[lt], &rnm2, &rnmu);

  if (my_rank == 0) {
    printf("mg n=%ld iterations=%ld rnm2=%.10e rnmu=%.10e\n", n, iterations, rnm2, rnmu);
  }
  for (int k = 1; k <= lt; ++k) {
    free(u[k]);
    free(r[k]);
  }
  free(v);
  free(work1);
  free(work2);
  free(work3);
  return 0;
}
