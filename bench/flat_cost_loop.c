/* The dense loop of bench/run.sh hooks (and its codec suite): does the cost
 * per event grow with run length or with thread count? Compiled with
 * -finstrument-functions; run without the runtime (glibc's no-op hooks) and
 * with LD_PRELOAD=libparlotrt.so.
 *
 * Usage:
 *   flat_cost_loop loop EVENTS THREADS
 *       THREADS threads (pthread), each running EVENTS / THREADS / 6 times
 *       level1 -> level2 -> level3 (6 events per iteration); the main thread
 *       only starts and joins them. Prints "events N", the exact number of
 *       events a complete trace holds (main, each worker, its loop).
 *   flat_cost_loop stencil N SWEEPS
 *       A 5-point Jacobi stencil on an N x N grid, SWEEPS sweeps, rows split
 *       by `#pragma omp parallel for` (OMP_NUM_THREADS threads); one
 *       instrumented call per grid point. Prints its checksum; the number of
 *       events comes from the trace (OpenMP's outlined functions count too).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

/* Each worker's result in a cache line of its own, so the workload itself
 * shares nothing between threads. */
struct result {
  _Alignas(64) long value;
};

NOINLINE long level3(long x) {
  return x + 1;
}
NOINLINE long level2(long x) {
  return level3(x) * 2;
}
NOINLINE long level1(long x) {
  return level2(x) + 1;
}

struct worker_arg {
  long iterations;
  struct result* out;
};

NOINLINE void* worker(void* p) {
  const struct worker_arg* a = p;
  long sum = 0;
  for (long i = 0; i < a->iterations; ++i) sum += level1(i);
  a->out->value = sum;
  return NULL;
}

NOINLINE static int run_loop(long events, int threads) {
  const long iterations = events / threads / 6;
  pthread_t* ids = calloc((size_t)threads, sizeof *ids);
  struct worker_arg* args = calloc((size_t)threads, sizeof *args);
  struct result* results = aligned_alloc(64, (size_t)threads * sizeof *results);
  if (ids == NULL || args == NULL || results == NULL) return 1;
  for (int t = 0; t < threads; ++t) {
    args[t] = (struct worker_arg){iterations, &results[t]};
    if (pthread_create(&ids[t], NULL, worker, &args[t]) != 0) return 1;
  }
  long sum = 0;
  for (int t = 0; t < threads; ++t) {
    pthread_join(ids[t], NULL);
    sum += results[t].value;
  }
  /* main, run_loop: 4 events; per worker: worker's 2 and 6 per iteration. */
  printf("events %ld\nchecksum %ld\n", 4 + (long)threads * (2 + 6 * iterations), sum);
  free(ids);
  free(args);
  free(results);
  return 0;
}

NOINLINE double point(const double* a, long n, long i, long j) {
  return 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
}

NOINLINE static int run_stencil(long n, long sweeps) {
  double* a = calloc((size_t)(n * n), sizeof *a);
  double* b = calloc((size_t)(n * n), sizeof *b);
  if (a == NULL || b == NULL) return 1;
  for (long j = 0; j < n; ++j) a[j] = b[j] = 1.0; /* hot top edge */
  for (long s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static)
    for (long i = 1; i < n - 1; ++i) {
      for (long j = 1; j < n - 1; ++j) b[i * n + j] = point(a, n, i, j);
    }
    double* t = a;
    a = b;
    b = t;
  }
  double sum = 0;
  for (long k = 0; k < n * n; ++k) sum += a[k];
  printf("checksum %.6f\n", sum);
  free(a);
  free(b);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "loop") == 0) {
    const long events = atol(argv[2]);
    const int threads = atoi(argv[3]);
    if (events <= 0 || threads <= 0) return 2;
    return run_loop(events, threads);
  }
  if (argc == 4 && strcmp(argv[1], "stencil") == 0) {
    const long n = atol(argv[2]);
    const long sweeps = atol(argv[3]);
    if (n < 3 || sweeps <= 0) return 2;
    return run_stencil(n, sweeps);
  }
  fprintf(stderr, "usage: %s loop EVENTS THREADS | stencil N SWEEPS\n", argv[0]);
  return 2;
}
