// Parlot example: conjugate gradient kernel in the style of NAS CG (C).
//
// Usage: cg [n] [iterations]     (defaults: 40 2)
//
// Builds a sparse, symmetric, strictly diagonally dominant (hence positive
// definite) n x n matrix in CSR form from a fixed-seed PRNG, like NAS makea:
// every row draws NONZER random off-diagonal entries, each mirrored to keep
// the matrix symmetric; duplicates are summed, and the diagonal is the row's
// absolute off-diagonal sum plus RCOND (0.1). Then it runs the NAS CG outer loop:
// `iterations` inverse power iterations, each solving A z = x with
// CG_ITERATIONS (25) conjugate gradient steps, and estimating the smallest
// eigenvalue as zeta = SHIFT + 1 / (x . z).
//
// Every vector kernel is its own function (sparse_matvec, row_dot, dot, axpy,
// xpby, scale, norm2), so the call pattern is that of a typical hand-written
// solver. Single-threaded and deterministic.
//
// Built with -DPARLOT_EXAMPLE_MPI it is an MPI program: every rank builds the
// whole matrix but owns one contiguous block of rows and the same block of
// every vector. Dot products and norms are summed with MPI_Allreduce, and the
// vectors multiplied by the matrix (p, and z for the final residual) are
// assembled on every rank with MPI_Allgatherv. Rank 0 prints the line, which
// equals the serial program's (the sums are added in another order, which
// the printed precision hides).
//
// Output (one line): cg n=<n> nnz=<nnz> iterations=<k> zeta=<e> rnorm=<e>
// (or rnorm<1e-13: a smaller residual is reported only as below that bound)

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define KERNEL_NAME "cg"
#include "kernel_main.h"

enum { NONZER = 5, CG_ITERATIONS = 25 };
static const double SHIFT = 10.0;  // NAS CG class S shift
static const double RCOND = 0.1;   // diagonal margin over the off-diagonal row sum

static const double RNORM_FLOOR = 1e-13;  // residuals below are rounding noise

// This rank's block of the rows and of every vector: [lo, hi).
static struct {
  long lo, hi;
#ifdef PARLOT_EXAMPLE_MPI
  int* counts;  // every rank's block length
  int* starts;  // every rank's lo
#endif
} part;

typedef struct {
  long n;
  long nnz;
  long* row_start;  // n + 1 entries
  long* col;        // nnz entries
  double* val;      // nnz entries
} CsrMatrix;

typedef struct {
  long row;
  long col;
  double val;
} Triplet;

// ---- Deterministic matrix generation ----------------------------------------

// 64-bit linear congruential generator (Knuth MMIX constants).
static uint64_t rng_next(uint64_t* state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return *state >> 11;  // top 53 bits
}

// Uniform in [0, 1).
static double rng_uniform(uint64_t* state) {
  return (double)rng_next(state) * 0x1.0p-53;
}

static long rng_index(uint64_t* state, long n) {
  return (long)(rng_uniform(state) * (double)n);
}

static void add_entry(Triplet* t, long* count, long row, long col, double val) {
  t[*count].row = row;
  t[*count].col = col;
  t[*count].val = val;
  ++*count;
}

// Sorts one row's entries by column (insertion sort: rows are short) and sums
// duplicate columns in place. Returns the new row length.
static long sort_and_compress_row(long* col, double* val, long len) {
  for (long i = 1; i < len; ++i) {
    long c = col[i];
    double v = val[i];
    long j = i;
    while (j > 0 && col[j - 1] > c) {
      col[j] = col[j - 1];
      val[j] = val[j - 1];
      --j;
    }
    col[j] = c;
    val[j] = v;
  }
  long out = 0;
  for (long i = 0; i < len; ++i) {
    if (out > 0 && col[out - 1] == col[i]) {
      val[out - 1] += val[i];
    } else {
      col[out] = col[i];
      val[out] = val[i];
      ++out;
    }
  }
  return out;
}

// Converts triplets to CSR (rows sorted, duplicates summed).
static int triplets_to_csr(const Triplet* t, long count, long n, CsrMatrix* a) {
  a->n = n;
  a->row_start = calloc((size_t)n + 1, sizeof *a->row_start);
  a->col = malloc((size_t)count * sizeof *a->col);
  a->val = malloc((size_t)count * sizeof *a->val);
  long* fill = calloc((size_t)n, sizeof *fill);
  if (!a->row_start || !a->col || !a->val || !fill) {
    free(fill);
    return 0;
  }
  for (long k = 0; k < count; ++k) ++a->row_start[t[k].row + 1];
  for (long i = 0; i < n; ++i) a->row_start[i + 1] += a->row_start[i];
  for (long k = 0; k < count; ++k) {
    long pos = a->row_start[t[k].row] + fill[t[k].row]++;
    a->col[pos] = t[k].col;
    a->val[pos] = t[k].val;
  }
  // Compress every row and close the gaps.
  long out = 0;
  for (long i = 0; i < n; ++i) {
    long begin = a->row_start[i];
    long len = a->row_start[i + 1] - begin;
    len = sort_and_compress_row(a->col + begin, a->val + begin, len);
    for (long k = 0; k < len; ++k) {
      a->col[out + k] = a->col[begin + k];
      a->val[out + k] = a->val[begin + k];
    }
    a->row_start[i] = out;
    out += len;
  }
  a->row_start[n] = out;
  a->nnz = out;
  free(fill);
  return 1;
}

static int make_matrix(long n, CsrMatrix* a) {
  long capacity = n * (2 * NONZER + 1);
  Triplet* t = malloc((size_t)capacity * sizeof *t);
  double* diag = calloc((size_t)n, sizeof *diag);
  if (!t || !diag) {
    free(t);
    free(diag);
    return 0;
  }
  uint64_t state = 314159265ULL;  // NAS CG's seed
  long count = 0;
  for (long i = 0; i < n; ++i) {
    for (int k = 0; k < NONZER; ++k) {
      long j = rng_index(&state, n);
      if (j == i) continue;                        // the diagonal is set below
      double v = 2.0 * rng_uniform(&state) - 1.0;  // [-1, 1), either sign
      double magnitude = v < 0.0 ? -v : v;
      add_entry(t, &count, i, j, v);
      add_entry(t, &count, j, i, v);
      diag[i] += magnitude;
      diag[j] += magnitude;
    }
  }
  for (long i = 0; i < n; ++i) add_entry(t, &count, i, i, diag[i] + RCOND);
  int ok = triplets_to_csr(t, count, n, a);
  free(t);
  free(diag);
  return ok;
}

// ---- Vector kernels ----------------------------------------------------------

static double row_dot(const CsrMatrix* a, long row, const double* x) {
  double sum = 0.0;
  for (long k = a->row_start[row]; k < a->row_start[row + 1]; ++k) sum += a->val[k] * x[a->col[k]];
  return sum;
}

// Rows [lo, hi) of y = A x: y[0, hi - lo) from all of x.
static void sparse_matvec(const CsrMatrix* a, long lo, long hi, const double* x, double* y) {
  for (long i = lo; i < hi; ++i) y[i - lo] = row_dot(a, i, x);
}

// x . y (over all ranks' blocks).
static double dot(long n, const double* x, const double* y) {
  double sum = 0.0;
  for (long i = 0; i < n; ++i) sum += x[i] * y[i];
#ifdef PARLOT_EXAMPLE_MPI
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#endif
  return sum;
}

// y = y + alpha x
static void axpy(long n, double alpha, const double* x, double* y) {
  for (long i = 0; i < n; ++i) y[i] += alpha * x[i];
}

// y = x + beta y
static void xpby(long n, const double* x, double beta, double* y) {
  for (long i = 0; i < n; ++i) y[i] = x[i] + beta * y[i];
}

// y = alpha x
static void scale(long n, double alpha, const double* x, double* y) {
  for (long i = 0; i < n; ++i) y[i] = alpha * x[i];
}

static double norm2(long n, const double* x) {
  return sqrt(dot(n, x, x));
}

#ifdef PARLOT_EXAMPLE_MPI
// Assembles a whole vector on every rank from the ranks' blocks (each rank's
// block of v is already at v + its lo).
static void gather_vector(double* v) {
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, part.counts, part.starts, MPI_DOUBLE,
                 MPI_COMM_WORLD);
}
#endif

// Solves A z = x approximately with CG_ITERATIONS conjugate gradient steps
// (NAS CG's conj_grad). x, q and r hold this rank's block (part); z and p
// are whole vectors (A multiplies them) of which this rank computes its block.
// Returns ||x - A z||.
static double conj_grad(const CsrMatrix* a, const double* x, double* z, double* p, double* q,
                        double* r) {
  long lo = part.lo, hi = part.hi, n = hi - lo;
  double* zb = z + lo;  // this rank's blocks of z and p
  double* pb = p + lo;
  scale(n, 0.0, x, zb);
  scale(n, 1.0, x, r);
  scale(n, 1.0, x, pb);
  double rho = dot(n, r, r);
  for (int cgit = 0; cgit < CG_ITERATIONS; ++cgit) {
#ifdef PARLOT_EXAMPLE_MPI
    gather_vector(p);
#endif
    sparse_matvec(a, lo, hi, p, q);
    double alpha = rho / dot(n, pb, q);
    axpy(n, alpha, pb, zb);
    axpy(n, -alpha, q, r);
    double rho0 = rho;
    rho = dot(n, r, r);
    if (rho == 0.0) break;  // converged exactly (only happens for tiny n)
    xpby(n, r, rho / rho0, pb);
  }
  // Explicit residual: r = x - A z.
#ifdef PARLOT_EXAMPLE_MPI
  gather_vector(z);
#endif
  sparse_matvec(a, lo, hi, z, r);
  xpby(n, x, -1.0, r);
  return norm2(n, r);
}

static int run(int argc, char** argv) {
  long n = 40, iterations = 2;
  if (argc > 3) {
    if (my_rank == 0) fprintf(stderr, "usage: cg [n] [iterations]\n");
    return 2;
  }
  if (argc > 1 && !parse_long(argv[1], "n", 1, 100000000L, &n)) return 2;
  if (argc > 2 && !parse_long(argv[2], "iterations", 1, 1000000L, &iterations)) return 2;

  part.lo = n * my_rank / num_ranks;
  part.hi = n * (my_rank + 1) / num_ranks;
  long nb = part.hi - part.lo;  // this rank's block length
  CsrMatrix a;
  int ok = make_matrix(n, &a);
  double* x = malloc((size_t)(nb + 1) * sizeof *x);
  double* z = malloc((size_t)n * sizeof *z);
  double* p = malloc((size_t)n * sizeof *p);
  double* q = malloc((size_t)(nb + 1) * sizeof *q);
  double* r = malloc((size_t)(nb + 1) * sizeof *r);
#ifdef PARLOT_EXAMPLE_MPI
  part.counts = malloc((size_t)num_ranks * sizeof *part.counts);
  part.starts = malloc((size_t)num_ranks * sizeof *part.starts);
  ok = ok && part.counts && part.starts;
  for (int k = 0; ok && k < num_ranks; ++k) {
    part.starts[k] = (int)(n * k / num_ranks);
    part.counts[k] = (int)(n * (k + 1) / num_ranks) - part.starts[k];
  }
#endif
  if (!ok || !x || !z || !p || !q || !r) {
    fprintf(stderr, "cg: out of memory for n=%ld\n", n);
#ifdef PARLOT_EXAMPLE_MPI
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    return 1;
  }
  for (long i = 0; i < nb; ++i) x[i] = 1.0;

  // Inverse power iteration, as in NAS CG's timed loop.
  double zeta = 0.0, rnorm = 0.0;
  for (long it = 0; it < iterations; ++it) {
    rnorm = conj_grad(&a, x, z, p, q, r);
    double xz = dot(nb, x, z + part.lo);
    double inv_znorm = 1.0 / norm2(nb, z + part.lo);
    zeta = SHIFT + 1.0 / xz;
    scale(nb, inv_znorm, z + part.lo, x);
  }

  if (my_rank == 0) {
    // zeta to 11 digits and rnorm to 3 are the same for any number of MPI
    // ranks; a residual below RNORM_FLOOR is rounding noise whose digits
    // depend on the order of the sums, so only the bound is printed.
    printf("cg n=%ld nnz=%ld iterations=%ld zeta=%.10e ", n, a.nnz, iterations, zeta);
    if (rnorm < RNORM_FLOOR) {
      printf("rnorm<%.0e\n", RNORM_FLOOR);
    } else {
      printf("rnorm=%.2e\n", rnorm);
    }
  }
#ifdef PARLOT_EXAMPLE_MPI
  free(part.counts);
  free(part.starts);
#endif
  free(x);
  free(z);
  free(p);
  free(q);
  free(r);
  free(a.row_start);
  free(a.col);
  free(a.val);
  return 0;
}
