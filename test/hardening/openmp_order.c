/* Thread numbering by creation with OpenMP: libgomp starts team thread k
 * (k = 1 .. T-1) with the k-th pthread_create of the process, whatever the
 * order in which the team's threads make their first events. Team thread k
 * runs (in the compiler's outlined region)
 *   team_work { (k + 1) x step }
 * in each of two parallel regions (the second reuses libgomp's threads).
 * Prints "threads T". */
#include <omp.h>

#include "hardening_common.h"

volatile int sink;

NOINLINE void step(int x) {
  sink = x;
}

NOINLINE void team_work(int k) {
  for (int i = 0; i <= k; ++i) step(i);
}

int main(int argc, char** argv) {
  const int threads = int_arg(argc > 1 ? argv[1] : NULL, 4);
  int seen = 0;
  for (int region = 0; region < 2; ++region) {
#pragma omp parallel num_threads(threads)
    {
      team_work(omp_get_thread_num());
#pragma omp single
      seen = omp_get_num_threads();
    }
  }
  printf("threads %d\n", seen);
  return 0;
}
