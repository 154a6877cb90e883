// Case 9: instrumented constructors and destructors of C++ objects with
// static storage: two globals (constructed before main, in order), a
// function-local static (constructed on first use inside main), all
// destroyed after main returns, in reverse order of construction:
//   Tracked::Tracked(int) { note }  x2      (g_first, g_second)
//   main { use_local { Tracked::Tracked(int) { note } } use_local }
//   Tracked::~Tracked() { note }  x3        (local, g_second, g_first)
// The compilers wrap the global constructors in functions of their own
// (_GLOBAL__sub_I_*, __static_initialization_and_destruction_0,
// __cxx_global_var_init*), instrumented or not; the test strips those.
#include <cstdio>

#include "hardening_common.h"

volatile int sink;

NOINLINE void note(int x) {
  sink = x;
}

struct Tracked {
  int id;
  NOINLINE explicit Tracked(int i) : id(i) { note(i); }
  NOINLINE ~Tracked() { note(-id); }
};

Tracked g_first(1);
Tracked g_second(2);

NOINLINE int use_local() {
  static Tracked local(3);
  return local.id;
}

int main() {
  const int a = use_local();
  const int b = use_local();
  std::printf("ids %d %d %d %d\n", g_first.id, g_second.id, a, b);
  return 0;
}
