// PARLOT_LIBCALLS with instrumented code running before the runtime's
// constructor (libcalls_early_lib.cpp): every library call of main must be
// recorded. Trace: early_hook, then
//   main { qsort { by_value ... } early_value puts }
#include <cstdio>
#include <cstdlib>

#include "hardening_common.h"

extern "C" int early_value(int);
static volatile int sink;

extern "C" NOINLINE void early_hook(int x) {
  sink = x;
}

static NOINLINE int by_value(const void* a, const void* b) {
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

int main(int argc, char**) {
  int v[3] = {3, argc, 2};
  qsort(v, 3, sizeof v[0], by_value);
  sink = early_value(v[0]);
  puts("early done");
  return 0;
}
