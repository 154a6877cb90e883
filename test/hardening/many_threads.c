/* Case 9: 2,000 short-lived threads (16 at a time). Thread i runs
 *   worker { step_a { leaf } (i % 4 + 1) x step_b { leaf } }
 * so each of the four shapes occurs 500 times. main shows no calls inside
 * its loop (the spawning code is not instrumented). Prints "threads T". */
#include <pthread.h>
#include <stdint.h>

#include "hardening_common.h"

volatile int sink;

NOINLINE void leaf(int x) {
  sink = x;
}
NOINLINE void step_a(int x) {
  leaf(x);
}
NOINLINE void step_b(int x) {
  leaf(x);
}
NOINLINE void* worker(void* arg) {
  const int i = (int)(intptr_t)arg;
  step_a(i);
  for (int k = 0; k < i % 4 + 1; ++k) step_b(k);
  return NULL;
}

NOTRACE static int spawn_all(int total, int batch) {
  int done = 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 16);
  while (done < total) {
    pthread_t t[64];
    int n = 0;
    for (; n < batch && done + n < total; ++n) {
      HCHECK(pthread_create(&t[n], &attr, worker, (void*)(intptr_t)(done + n)) == 0);
    }
    for (int k = 0; k < n; ++k) HCHECK(pthread_join(t[k], NULL) == 0);
    done += n;
  }
  return done;
}

int main(int argc, char** argv) {
  const int total = int_arg(argc > 1 ? argv[1] : NULL, 2000);
  printf("threads %d\n", spawn_all(total, 16));
  return 0;
}
