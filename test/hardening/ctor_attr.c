/* Case 9: __attribute__((constructor)) and ((destructor)) functions, with
 * priorities, around main:
 *   init_early { leaf } init_late { leaf } main { leaf }
 *   fini_late { leaf } fini_early { leaf }
 * (constructors run in increasing priority, destructors in decreasing) */
#include "hardening_common.h"

volatile int sink;

NOINLINE void leaf(int x) {
  sink = x;
}

__attribute__((constructor(201))) NOINLINE void init_early(void) {
  leaf(1);
}
__attribute__((constructor(202))) NOINLINE void init_late(void) {
  leaf(2);
}
__attribute__((destructor(201))) NOINLINE void fini_early(void) {
  leaf(3);
}
__attribute__((destructor(202))) NOINLINE void fini_late(void) {
  leaf(4);
}

int main(void) {
  leaf(0);
  printf("main\n");
  return 0;
}
