/* A 4-rank MPI program whose time is known, for `parlot-read report`: each
 * rank R spins in imbalanced_work for (R + 1) x 20 ms (rank 3 is the
 * slowest), then all wait in MPI_Barrier for rank 3; rank 1 naps 100 ms
 * in a blocking leaf (nanosleep) and sends to rank 0, which waits for it
 * in MPI_Recv. Each rank measures every call it makes with
 * CLOCK_MONOTONIC and prints one line per call kind:
 *   measured <rank> <name> <ns>
 * (MPI calls summed by name), so the test compares the report with what
 * the program saw.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

/* Not traced: the test counts the fixture's own calls only. */
__attribute__((no_instrument_function)) static unsigned long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static volatile unsigned long long sink;

NOINLINE static void imbalanced_work(int rank) {
  const unsigned long long end = now_ns() + (unsigned long long)(rank + 1) * 20000000ull;
  /* The clock read rarely: a few calls into the C library, not millions. */
  do {
    for (int i = 0; i < 100000; ++i) sink++;
  } while (now_ns() < end);
}

NOINLINE static void nap(void) {
  struct timespec t = {0, 100000000};
  while (nanosleep(&t, &t) != 0) {
  }
}

int main(int argc, char** argv) {
  unsigned long long t = now_ns();
  MPI_Init(&argc, &argv);
  const unsigned long long init = now_ns() - t;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  t = now_ns();
  imbalanced_work(rank);
  const unsigned long long work = now_ns() - t;

  t = now_ns();
  MPI_Barrier(MPI_COMM_WORLD);
  const unsigned long long barrier = now_ns() - t;

  int value = 42;
  unsigned long long recv = 0, send = 0, napped = 0;
  if (rank == 1) {
    t = now_ns();
    nap();
    napped = now_ns() - t;
    t = now_ns();
    MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    send = now_ns() - t;
  } else if (rank == 0) {
    t = now_ns();
    MPI_Recv(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    recv = now_ns() - t;
  }

  t = now_ns();
  MPI_Finalize();
  const unsigned long long finalize = now_ns() - t;
  printf("measured %d imbalanced_work %llu\n", rank, work);
  printf("measured %d nap %llu\n", rank, napped);
  printf("measured %d MPI_Init %llu\n", rank, init);
  printf("measured %d MPI_Barrier %llu\n", rank, barrier);
  printf("measured %d MPI_Recv %llu\n", rank, recv);
  printf("measured %d MPI_Send %llu\n", rank, send);
  printf("measured %d MPI_Finalize %llu\n", rank, finalize);
  return 0;
}
