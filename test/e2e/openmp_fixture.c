/* An OpenMP program (gcc -fopenmp -finstrument-functions) for the OpenMP
   region frames (openmp_regions_test.cpp): a `parallel` region of 4
   threads, each calling work(), then a `parallel for schedule(dynamic)` of
   8 iterations on 4 threads. With the argument "stuck" every thread of the
   first region waits in wait_forever() after printing (once) "ready", for
   the test to stop it with SIGTERM. */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int sink;
static int arrived;

static void work(int t) {
  /* Atomic: the threads of a region add at once (a plain += lost updates). */
  __atomic_add_fetch(&sink, t, __ATOMIC_RELAXED);
}

static void wait_forever(void) {
  for (;;) usleep(1000);
}

int main(int argc, char** argv) {
  const int stuck = argc > 1 && strcmp(argv[1], "stuck") == 0;
#pragma omp parallel num_threads(4)
  {
    work(omp_get_thread_num());
    if (stuck) {
      if (__atomic_add_fetch(&arrived, 1, __ATOMIC_SEQ_CST) == 4) {
        printf("ready\n");
        fflush(stdout);
      }
      wait_forever();
    }
  }
#pragma omp parallel for schedule(dynamic) num_threads(4)
  for (int i = 0; i < 8; ++i) work(i);
  printf("done %d\n", sink);
  return 0;
}
