/* Cost of one traced MPI call: times N calls of MPI_Comm_rank (the cheapest
   MPI call, so the wrapper's cost is not hidden by the call's own) on one
   rank and prints ns per call. Run it bare, under the runtime, and under the
   runtime plus libparlotmpi.so (bench/run.sh mpi does). Not
   instrumented: only the MPI wrappers make events.
   Usage: mpi_call_cost [calls] [rank|sendrecv] (default 10,000,000 calls
   of MPI_Comm_rank; `sendrecv`: each call is an MPI_Send of one int to
   this rank itself and the MPI_Recv that takes it, two wrapped calls). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const long calls = argc > 1 ? atol(argv[1]) : 10000000L;
  const int sendrecv = argc > 2 && strcmp(argv[2], "sendrecv") == 0;
  MPI_Init(&argc, &argv);
  int rank = 0;
  long sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const double t0 = now_ns();
  if (sendrecv) {
    for (long i = 0; i < calls; ++i) {
      int out = (int)i, in = 0;
      MPI_Send(&out, 1, MPI_INT, rank, 7, MPI_COMM_WORLD);
      MPI_Recv(&in, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sum += in;
    }
  } else {
    for (long i = 0; i < calls; ++i) {
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      sum += rank;
    }
  }
  const double t1 = now_ns();
  printf("%.2f ns per %s (%ld calls, checksum %ld)\n", (t1 - t0) / (double)calls,
         sendrecv ? "MPI_Send + MPI_Recv to self" : "MPI_Comm_rank", calls, sum);
  MPI_Finalize();
  return 0;
}
