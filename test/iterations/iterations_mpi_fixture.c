/* MPI fixture of the iterations tests (iterations_test.cpp), four ranks:
 * a loop of 60 time steps, each a computation (step_compute, 2 ms in an
 * uninstrumented nanosleep, so the fixture leaves the CPU to the other
 * ranks of an oversubscribed run) followed by an MPI_Allreduce; in
 * iteration 40 rank 1 computes 50 ms longer, so the three other ranks wait for it in
 * MPI_Allreduce, then a tally. Rank 0 prints "slow iteration 40 rank 1".
 * With an argument ("rotate"), rank 0 also tallies once before the loop,
 * so its calls read tally, step, exchange, tally, ... and nested loop
 * recognition folds its loop from tally, the other ranks' from
 * step_compute. Build with -finstrument-functions. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

enum { kSteps = 60, kSlowStep = 40, kSlowRank = 1 };

__attribute__((no_instrument_function)) static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Own work: `ns` of CLOCK_MONOTONIC without making events. */
__attribute__((noinline)) void step_compute(long long ns) {
  const long long end = now_ns() + ns;
  for (long long left = ns; left > 0; left = end - now_ns()) {
    const struct timespec d = {left / 1000000000LL, left % 1000000000LL};
    nanosleep(&d, NULL);
  }
}

__attribute__((noinline)) double exchange(double value) {
  double sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

static volatile long tallies;

__attribute__((noinline)) void tally(void) {
  ++tallies;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double value = rank;
  if (argc > 1 && rank == 0) tally();
  for (int step = 0; step < kSteps; ++step) {
    const int slow = step == kSlowStep && rank == kSlowRank;
    step_compute(slow ? 52000000LL : 2000000LL);
    value = exchange(value) / 4;
    tally();
  }
  if (rank == 0) printf("slow iteration %d rank %d (%g)\n", kSlowStep, kSlowRank, value);
  MPI_Finalize();
  return 0;
}
