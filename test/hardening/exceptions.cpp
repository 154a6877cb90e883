// Case 2: C++ exceptions thrown through several frames, caught, rethrown,
// with destructors running on the way. No std::string or std containers:
// clang 14 + libstdc++ + -finstrument-functions cannot link them (llvm
// issue 50742). gcc calls the exit hooks of the frames it unwinds; clang
// does not, so the runtime must close those frames from the stack pointer.
#include <cstdio>

#include "hardening_common.h"

volatile int sink;

NOINLINE void note(int x) {
  sink = x;
}

struct Guard {
  int id;
  NOINLINE explicit Guard(int i) : id(i) { note(i); }
  NOINLINE ~Guard() { note(-id); }
};

struct Error {
  int code;
};

NOINLINE void thrower(int code) {
  Guard g(3);
  if (code != 0) throw Error{code};
  note(0);
}
NOINLINE void mid(int code) {
  Guard g(2);
  thrower(code);
  note(0);
}
NOINLINE void top(int code) {
  Guard g(1);
  mid(code);
  note(0);
}

// Thrown through three frames with a destructor in each, caught here.
NOINLINE int catch_deep() {
  int got = 0;
  try {
    top(7);
  } catch (const Error& e) {
    note(e.code);
    got = e.code;
  }
  note(100);
  return got;
}

// Caught in the middle, a call made in the handler, rethrown with `throw;`.
NOINLINE void rethrower() {
  Guard g(4);
  try {
    mid(8);
  } catch (...) {
    note(50);
    throw;
  }
}
NOINLINE int catch_rethrown() {
  int got = 0;
  try {
    rethrower();
  } catch (const Error& e) {
    note(e.code);
    got = e.code;
  }
  return got;
}

// Caught and a new exception thrown from the handler.
NOINLINE void translator() {
  try {
    thrower(9);
  } catch (const Error& e) {
    note(e.code);
    throw Error{e.code + 1};
  }
}
NOINLINE int catch_translated() {
  try {
    translator();
  } catch (const Error& e) {
    return e.code;
  }
  return 0;
}

int main() {
  const int a = catch_deep();
  const int b = catch_rethrown();
  const int c = catch_translated();
  std::printf("caught %d %d %d\n", a, b, c);
  return 0;
}
