/* Case 9: recursion N frames deep (default 100,000) on a thread with a
 * 1 GiB stack: deep_worker { recurse(N) { recurse(N-1) { ... recurse(1) { leaf } } } }.
 * Prints "depth D". */
#include <pthread.h>
#include <stdint.h>

#include "hardening_common.h"

volatile int sink;

NOINLINE void leaf(int x) {
  sink = x;
}

NOINLINE int recurse(int n) {
  if (n == 1) {
    leaf(n);
    return 1;
  }
  return recurse(n - 1) + 1;
}

NOINLINE void* deep_worker(void* arg) {
  return (void*)(intptr_t)recurse((int)(intptr_t)arg);
}

int main(int argc, char** argv) {
  const int n = int_arg(argc > 1 ? argv[1] : NULL, 100000);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  HCHECK(pthread_attr_setstacksize(&attr, (size_t)1 << 30) == 0);
  pthread_t t;
  void* ret = NULL;
  HCHECK(pthread_create(&t, &attr, deep_worker, (void*)(intptr_t)n) == 0);
  HCHECK(pthread_join(t, &ret) == 0);
  printf("depth %d\n", (int)(intptr_t)ret);
  return 0;
}
