// Not instrumented. Its static constructor calls early_hook, an instrumented
// function of the program that links it (libcalls_early.cpp), as Open MPI's
// libmpi_cxx builds MPI::COMM_WORLD with the program's inline constructor:
// instrumented code then runs before the runtime's own constructor (a
// preloaded library is initialised after the program's libraries).
extern "C" void early_hook(int);

namespace {
struct Early {
  Early() { early_hook(1); }
} early;
}  // namespace

extern "C" int early_value(int x) {
  return x + 1;
}
