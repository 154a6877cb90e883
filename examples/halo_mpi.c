// Parlot example: 1-D Jacobi relaxation on a periodic rod split over MPI
// ranks, with a halo exchange and an allreduce per iteration (C, MPI), and
// two switches that plant a bug in one rank, for finding the odd rank
// (parlot-read classes, stacks, diff; README "Finding the odd rank").
//
// Usage: halo_mpi [iterations] [--skip-exchange RANK:ITER] [--wrong-branch RANK]
//                 [--extra-iteration RANK]
//        (default 20 iterations, no bug)
//
// Each iteration every rank calls exchange_halo (its two ghost cells from
// its left and right neighbours on the ring: shift to the right, then to the
// left), relax (a Jacobi sweep; use_ghosts, or apply_fixed_boundary for a
// rank at a fixed boundary: none on a periodic rod), and residual_norm (an
// MPI_Allreduce of the squared updates). Rank 0 prints each iteration's
// residual, flushed, then one result line.
//
// --skip-exchange R:K  rank R skips exchange_halo at iteration K (0-based)
//                      and blocks in residual_norm's MPI_Allreduce; the
//                      other ranks block in the exchange: the sends are
//                      synchronous (MPI_Issend), so a send completes only
//                      when its receive is posted, and the stall spreads
//                      the same way whatever the MPI's eager limit is. On
//                      4 ranks every other rank ends in exchange_halo >
//                      shift > MPI_Waitall. The job hangs: stop it with
//                      SIGTERM.
// --wrong-branch R     rank R takes the fixed-boundary branch of relax at
//                      every iteration (apply_fixed_boundary instead of
//                      use_ghosts) and finishes with a wrong result.
// --extra-iteration R  rank R runs one iteration more than the others (an
//                      off-by-one loop bound): its extra exchange_halo
//                      waits for neighbours that are in MPI_Finalize. The
//                      job hangs: stop it with SIGTERM.
//
// Determinism: the field, the iteration count and the branch taken depend
// only on the arguments and the number of ranks; every rank makes the same
// calls unless a switch names it.

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kCells = 64, kTagRight = 1, kTagLeft = 2 };

typedef struct {
  int iterations;
  int skip_rank, skip_iteration;  // --skip-exchange (-1: off)
  int wrong_rank;                 // --wrong-branch (-1: off)
  int extra_rank;                 // --extra-iteration (-1: off)
} Options;

static void usage(void) {
  fprintf(stderr,
          "usage: halo_mpi [iterations] [--skip-exchange RANK:ITER] [--wrong-branch RANK]\n"
          "                [--extra-iteration RANK]\n");
  exit(2);
}

static Options parse_args(int argc, char** argv) {
  Options o = {20, -1, -1, -1, -1};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--skip-exchange") == 0 && i + 1 < argc) {
      if (sscanf(argv[++i], "%d:%d", &o.skip_rank, &o.skip_iteration) != 2) usage();
    } else if (strcmp(argv[i], "--wrong-branch") == 0 && i + 1 < argc) {
      o.wrong_rank = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--extra-iteration") == 0 && i + 1 < argc) {
      o.extra_rank = atoi(argv[++i]);
    } else if (argv[i][0] != '-') {
      o.iterations = atoi(argv[i]);
    } else {
      usage();
    }
  }
  if (o.iterations < 1) usage();
  return o;
}

// u[1..kCells] are the rank's cells, u[0] and u[kCells + 1] its ghosts.
static void init_field(double* u, int rank) {
  for (int i = 0; i <= kCells + 1; ++i) u[i] = (double)((rank * kCells + i) % 17);
}

// Sends `send` to rank `to` and receives `recv` from rank `from`.
static void shift(double* send, double* recv, int to, int from, int tag) {
  MPI_Request req[2];
  MPI_Irecv(recv, 1, MPI_DOUBLE, from, tag, MPI_COMM_WORLD, &req[0]);
  MPI_Issend(send, 1, MPI_DOUBLE, to, tag, MPI_COMM_WORLD, &req[1]);
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
}

static void exchange_halo(double* u, int left, int right) {
  shift(&u[kCells], &u[0], right, left, kTagRight);
  shift(&u[1], &u[kCells + 1], left, right, kTagLeft);
}

static void use_ghosts(const double* u, double* next) {
  next[1] = 0.5 * (u[0] + u[2]);
  next[kCells] = 0.5 * (u[kCells - 1] + u[kCells + 1]);
}

static void apply_fixed_boundary(const double* u, double* next) {
  next[1] = u[1];
  next[kCells] = u[kCells];
}

// One Jacobi sweep; returns the sum of the squared updates.
static double relax(double* u, int fixed_boundary) {
  double next[kCells + 2];
  for (int i = 2; i < kCells; ++i) next[i] = 0.5 * (u[i - 1] + u[i + 1]);
  if (fixed_boundary) {
    apply_fixed_boundary(u, next);
  } else {
    use_ghosts(u, next);
  }
  double sum = 0;
  for (int i = 1; i <= kCells; ++i) {
    sum += (next[i] - u[i]) * (next[i] - u[i]);
    u[i] = next[i];
  }
  return sum;
}

static double residual_norm(double local) {
  double global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return global;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Options o = parse_args(argc, argv);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  double u[kCells + 2];
  init_field(u, rank);
  double residual = 0;
  // The planted bug of --extra-iteration: a loop bound off by one on one rank.
  const int iterations = o.iterations + (rank == o.extra_rank ? 1 : 0);
  for (int it = 0; it < iterations; ++it) {
    // The planted bug: a wrong condition around the exchange.
    if (!(rank == o.skip_rank && it == o.skip_iteration)) exchange_halo(u, left, right);
    residual = residual_norm(relax(u, rank == o.wrong_rank));
    if (rank == 0) {
      printf("iteration %d residual %.6e\n", it, residual);
      fflush(stdout);
    }
  }
  if (rank == 0)
    printf("halo_mpi ranks=%d iterations=%d residual=%.6e\n", size, o.iterations, residual);
  MPI_Finalize();
  return 0;
}
