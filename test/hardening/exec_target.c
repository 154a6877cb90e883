/* An instrumented program that fork_exec runs with exec, vfork+exec,
 * posix_spawn: main { target_work { leaf } }, exit status 0, prints its
 * argument. */
#include "hardening_common.h"

volatile int sink;

NOINLINE void leaf(int x) {
  sink = x;
}
NOINLINE void target_work(int x) {
  leaf(x);
}

int main(int argc, char** argv) {
  target_work(argc);
  printf("target %s\n", argc > 1 ? argv[1] : "-");
  return 0;
}
