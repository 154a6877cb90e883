// Cost of thread creation through the runtime's pthread_create interposer
// (runtime/interposers/thread_create_interposer.cpp): CPU ns of the process (every
// thread's, CLOCK_PROCESS_CPUTIME_ID: waiting for a CPU on a loaded machine
// does not count) per pthread_create + join of a thread that returns at
// once, called two ways in the same process:
//   linked  pthread_create as the program links it (the interposer when
//           libparlotrt.so is loaded, the C library's otherwise);
//   libc    the C library's own pthread_create (dlsym in libc.so.6), which
//           no interposer sees: the baseline of the same run.
// ROUNDS interleaved rounds of N threads each; prints the median ns per
// thread of each way and their ratio. Not instrumented: the runtime never
// starts a trace, so only the interposer is measured.
// Usage: thread_create_cost [N] [ROUNDS]   (defaults 2000 15)
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*CreateFn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

static void* nothing(void* arg) {
  return arg;
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

// CPU ns per create + join of `n` threads, one at a time.
static double round_ns(CreateFn create, int n) {
  const double start = now_ns();
  for (int i = 0; i < n; ++i) {
    pthread_t t;
    if (create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0) {
      fprintf(stderr, "thread_create_cost: cannot create a thread\n");
      exit(1);
    }
  }
  return (now_ns() - start) / n;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return v[n / 2];
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 2000;
  int rounds = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 15;
  if (n < 1 || rounds < 1) return 2;
  if (rounds > 101) rounds = 101;
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  CreateFn libc_create = libc != NULL ? (CreateFn)dlsym(libc, "pthread_create") : NULL;
  if (libc_create == NULL) {
    fprintf(stderr, "thread_create_cost: no pthread_create in libc.so.6\n");
    return 1;
  }
  double linked[101], direct[101];
  round_ns(pthread_create, n / 10 + 1);  // warm up: stacks cached, code paged in
  for (int r = 0; r < rounds; ++r) {
    linked[r] = round_ns(pthread_create, n);
    direct[r] = round_ns(libc_create, n);
  }
  const double l = median(linked, rounds), d = median(direct, rounds);
  printf("linked_ns %.0f libc_ns %.0f ratio %.3f\n", l, d, l / d);
  return 0;
}
