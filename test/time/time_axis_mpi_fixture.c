/* MPI fixture of the time-axis tests (time_axis_test.cpp), two ranks: rank
 * 1 sleeps 300 ms (uninstrumented nanosleep, no events) and sends; rank 0
 * waits for it in MPI_Recv, then makes 3,000 tiny calls. Rank 0 prints, as
 * it measured them with CLOCK_MONOTONIC, "MPI_Recv ns" and "tiny_calls ns".
 * Build with -finstrument-functions. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

__attribute__((no_instrument_function)) static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile long long sink;

__attribute__((noinline)) void tiny(int i) {
  sink += i;
}

__attribute__((noinline)) void tiny_calls(void) {
  for (int i = 0; i < 3000; ++i) tiny(i);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  int value = 42;
  if (rank == 1) {
    const struct timespec d = {0, 300 * 1000 * 1000};
    nanosleep(&d, NULL);
    MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
  } else if (rank == 0) {
    long long before = now_ns();
    MPI_Recv(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const long long recv_ns = now_ns() - before;
    before = now_ns();
    tiny_calls();
    const long long tiny_ns = now_ns() - before;
    printf("MPI_Recv %lld\ntiny_calls %lld\n", recv_ns, tiny_ns);
  }
  MPI_Finalize();
  return 0;
}
