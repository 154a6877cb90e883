// C++ fixture of the sled tests (sleds_test.cpp): an exception thrown
// three sled-traced frames down and caught in catcher, which then calls
// after_catch. Built both with sleds and with -finstrument-functions.
#include <cstdio>
#include <stdexcept>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void thrower(int x) {
  if (x > 0) throw std::runtime_error("down");
  sink = x;
}
NOINLINE void middle(int x) {
  thrower(x);
  sink = 1;
}
NOINLINE void after_catch() {
  sink = 2;
}
NOINLINE int catcher(int x) {
  try {
    middle(x);
  } catch (const std::exception&) {
    after_catch();
    return 1;
  }
  return 0;
}

int main() {
  int caught = 0;
  for (int i = 1; i <= 3; ++i) caught += catcher(i);
  std::printf("%d\n", caught);
  return caught == 3 ? 0 : 1;
}
