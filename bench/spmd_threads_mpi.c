// An SPMD MPI program with two threads per rank, for bench/many_ranks.sh
// (docs/BENCHMARKS.md "Many ranks"): every rank runs the same code on the
// same data, so what differs between two ranks' traces is what the
// runtime makes differ (addresses, pids, times), not the program.
//
//   spmd_threads_mpi [steps] [calls]     (default 20 steps of 20000 calls)
//
// Each step: the main thread and one worker thread (started once) each
// make `calls` calls of a small leaf chain (stencil -> relax -> weight), then the main
// thread combines the two threads' sums over the ranks with MPI_Allreduce.
// Rank 0 prints the final sum, which is the same for any number of ranks.
// With SPMD_FINALIZE_LOG=FILE every rank appends the CLOCK_REALTIME (ns)
// at which its MPI_Finalize returned to FILE, one line each, so that a
// script can tell the time from the last rank's MPI_Finalize to the
// launcher's exit (the trace's finish runs in between).
// Build: mpicc -O2 -g -finstrument-functions -pthread spmd_threads_mpi.c
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct work {
  long steps, calls;
  double sum;
  pthread_barrier_t* barrier;
};

__attribute__((noinline)) static double weight(long i) {
  return (double)(i % 7) * 0.125;
}

__attribute__((noinline)) static double relax(long i, double x) {
  return 0.5 * x + weight(i);
}

__attribute__((noinline)) static double stencil(long i) {
  return relax(i, (double)(i % 13)) + relax(i + 1, 1.0);
}

__attribute__((noinline)) static double sweep(long calls) {
  double s = 0.0;
  for (long i = 0; i < calls; ++i) s += stencil(i);
  return s;
}

// The worker thread: one sweep per step, between the main thread's
// barriers (the main thread reads `sum` after the second).
static void* worker(void* arg) {
  struct work* w = arg;
  for (long s = 0; s < w->steps; ++s) {
    pthread_barrier_wait(w->barrier);
    w->sum = sweep(w->calls);
    pthread_barrier_wait(w->barrier);
  }
  return NULL;
}

__attribute__((noinline)) static double step(struct work* w) {
  pthread_barrier_wait(w->barrier);
  const double mine = sweep(w->calls);
  pthread_barrier_wait(w->barrier);
  double local = mine + w->sum, total = 0.0;
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

int main(int argc, char** argv) {
  int provided = 0, rank = 0, size = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long steps = argc > 1 ? atol(argv[1]) : 20;
  const long calls = argc > 2 ? atol(argv[2]) : 20000;
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, 2);
  struct work w = {steps, calls, 0.0, &barrier};
  pthread_t t;
  if (pthread_create(&t, NULL, worker, &w) != 0) abort();
  double total = 0.0;
  for (long s = 0; s < steps; ++s) total += step(&w) / size;
  pthread_join(t, NULL);
  if (rank == 0) printf("spmd_threads_mpi: %ld steps, sum %.3f\n", steps, total);
  MPI_Finalize();
  const char* log = getenv("SPMD_FINALIZE_LOG");
  if (log != NULL) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char line[32];
    const int n =
        snprintf(line, sizeof line, "%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    const int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd >= 0) {
      if (write(fd, line, (size_t)n) != n) abort();
      close(fd);
    }
  }
  return 0;
}
