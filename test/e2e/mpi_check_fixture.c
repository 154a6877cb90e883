/* An MPI program with planted usage bugs for `parlot-read check`
   (mpi_check_test.cpp), run with PARLOT_MPI_ARGS=1 on 3 ranks:

     mpi_check_fixture MODE

   Six iterations of a loop in main, each a step() of an MPI_Allreduce, an
   MPI_Reduce to root 0 and a ring exchange (MPI_Sendrecv). In iteration 4
   (i == 3) the mode plants its bug:
     clean           none
     wrong-root      rank 1 passes root=1 to MPI_Reduce
     wrong-kind      rank 1 calls MPI_Bcast where the others call MPI_Reduce
     wrong-count     rank 1 reduces 2 doubles where the others reduce 1
     wrong-op        rank 1 reduces with MPI_MAX where the others use MPI_SUM
     unmatched-send  rank 0 also sends rank 1 a message (tag 99) nobody receives
     deadlock        ranks 0 and 1 each wait in MPI_Recv for the other first;
                     rank 2 goes on to the next MPI_Allreduce
   Prints "planted" (flushed) just before the bug, then "done" at the end
   (a run that hangs is stopped by the test). Instrumented: each call has an
   instrumented caller. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, size;
static const char* mode = "clean";

static int planted(int i, const char* which) {
  return i == 3 && strcmp(mode, which) == 0;
}

static void announce(int i) {
  if (i == 3 && strcmp(mode, "clean") != 0) {
    printf("planted\n");
    fflush(stdout);
  }
}

static double reduce_step(int i, double v) {
  double sum[2] = {0, 0}, in[2] = {v, v};
  if (planted(i, "wrong-root") && rank == 1) {
    MPI_Reduce(in, sum, 1, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD);
  } else if (planted(i, "wrong-kind") && rank == 1) {
    MPI_Bcast(in, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  } else if (planted(i, "wrong-count") && rank == 1) {
    MPI_Reduce(in, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  } else if (planted(i, "wrong-op") && rank == 1) {
    MPI_Reduce(in, sum, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  } else {
    MPI_Reduce(in, sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  }
  return sum[0];
}

static void exchange(int i) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int out = rank, in = -1;
  if (planted(i, "deadlock") && rank < 2) {
    MPI_Recv(&in, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&out, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD);
    return;
  }
  if (planted(i, "deadlock")) return;
  if (planted(i, "unmatched-send") && rank == 0) {
    MPI_Send(&out, 1, MPI_INT, 1, 99, MPI_COMM_WORLD);
  }
  MPI_Sendrecv(&out, 1, MPI_INT, next, 5, &in, 1, MPI_INT, prev, 5, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}

static double step(int i) {
  double local = rank + i, total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  announce(i);
  total += reduce_step(i, local);
  exchange(i);
  return total;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1) mode = argv[1];
  double total = 0;
  for (int i = 0; i < 6; ++i) total += step(i);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("done %g\n", total);
  MPI_Finalize();
  return 0;
}
