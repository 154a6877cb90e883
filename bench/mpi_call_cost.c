/* Cost of one traced MPI call: times N calls of MPI_Comm_rank (the cheapest
   MPI call, so the wrapper's cost is not hidden by the call's own) on one
   rank and prints ns per call. Run it bare, under the runtime, and under the
   runtime plus libparlotmpi.so (bench/mpi_overhead.sh does). Not
   instrumented: only the MPI wrappers make events.
   Usage: mpi_call_cost [calls] (default 10,000,000). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const long calls = argc > 1 ? atol(argv[1]) : 10000000L;
  MPI_Init(&argc, &argv);
  int rank = 0;
  long sum = 0;
  const double t0 = now_ns();
  for (long i = 0; i < calls; ++i) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    sum += rank;
  }
  const double t1 = now_ns();
  printf("%.2f ns per MPI_Comm_rank (%ld calls, checksum %ld)\n", (t1 - t0) / (double)calls, calls,
         sum);
  MPI_Finalize();
  return 0;
}
