/* An MPI program for the argument records of Parlot's MPI wrappers
   (mpi_wrappers_test.cpp, PARLOT_MPI_ARGS=1): nonblocking point to point
   completed by MPI_Wait, MPI_Waitany, MPI_Waitall and MPI_Waitsome (with
   and without statuses), derived communicators (MPI_Comm_split,
   MPI_Comm_dup) used by rooted collectives and freed, and MPI_Sendrecv
   with MPI_STATUS_IGNORE. Any number of ranks. Instrumented, so each call
   has an instrumented caller. */
#include <mpi.h>
#include <stdio.h>

static int rank, size;

static void ring_exchange(MPI_Comm comm) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int out[4] = {rank, rank, rank, rank}, in[4];
  MPI_Request r[2];
  MPI_Status st[2];
  MPI_Isend(out, 4, MPI_INT, next, 3, comm, &r[0]);
  MPI_Irecv(in, 4, MPI_INT, prev, 3, comm, &r[1]);
  MPI_Waitall(2, r, st);

  MPI_Irecv(in, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r[1]);
  MPI_Isend(out, 2, MPI_INT, next, 4, comm, &r[0]);
  MPI_Status one;
  MPI_Wait(&r[1], &one);
  int index = -1;
  MPI_Waitany(1, &r[0], &index, MPI_STATUS_IGNORE);

  MPI_Isend(out, 1, MPI_INT, next, 5, comm, &r[0]);
  MPI_Irecv(in, 1, MPI_INT, prev, 5, comm, &r[1]);
  int done = 0, indices[2];
  while (done < 2) {
    int outcount = 0;
    MPI_Waitsome(2, r, &outcount, indices, MPI_STATUSES_IGNORE);
    if (outcount == MPI_UNDEFINED) break;
    done += outcount;
  }
}

static double halves(MPI_Comm half) {
  double v[8] = {rank, 1, 2, 3, 4, 5, 6, 7}, sum[8];
  MPI_Bcast(v, 8, MPI_DOUBLE, 0, half);
  MPI_Reduce(v, sum, 8, MPI_DOUBLE, MPI_SUM, 0, half);
  return sum[0];
}

static void neighbours(void) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  long out = rank, in = -1;
  MPI_Sendrecv(&out, 1, MPI_LONG, next, 6, &in, 1, MPI_LONG, prev, 6, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm half, dup;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  ring_exchange(dup);
  const double s = halves(half);
  neighbours();
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  MPI_Barrier(MPI_COMM_SELF);
  if (rank == 0) printf("mpi_args_fixture ranks=%d sum=%g\n", size, s);
  MPI_Finalize();
  return 0;
}
