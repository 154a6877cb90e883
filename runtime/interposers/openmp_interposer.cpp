// OpenMP parallel regions as frames (GCC's libgomp ABI). GCC outlines the
// body of a `#pragma omp parallel` into a function (`main._omp_fn.0`) that
// it does not instrument, and hands it to GOMP_parallel, which runs it on
// every thread of the team, the calling one included. The interposers here
// pass libgomp a thunk instead that records the outlined function's entry
// and exit around it, so on every thread the region is a frame: a worker's
// calls nest under it, and the master's under its caller. The symbolizer
// names the frame from the outlined function's address.
//
// The thunk's argument (the outlined function and its data) lives on the
// calling thread's stack: GOMP_parallel and its combined-loop and sections
// variants return only after the region ended on every thread. No malloc,
// no lock. Interposed whether libgomp is loaded or not (nothing calls these
// without it); the next definition is resolved at the first call (then
// libgomp is loaded: the lookup succeeds. A lookup before main would fail
// in a program without libgomp, and dlerror's message is malloc'ed and
// freed through the program's malloc, an instrumented one included). Left
// as they are: GOMP_parallel_start/_end (the master calls the body
// itself), GOMP_task (libgomp copies the data), GOMP_parallel_reductions
// (libgomp reads the data), GOMP_teams.
#include <dlfcn.h>

#include "ignore_hooks.h"
#include "next_symbol.h"

extern "C" {
void __cyg_profile_func_enter(void* fn, void* call_site);
void __cyg_profile_func_exit(void* fn, void* call_site);
}

namespace {

using Body = void (*)(void*);

// What every thread of the team runs through the thunk.
struct Region {
  Body body;
  void* data;
};

// Runs the outlined body as a recorded frame of the function at its
// address (the hooks take this frame's stack pointer as the frame's).
[[gnu::noinline]] void run_region(void* p) {
  const Region* r = static_cast<const Region*>(p);
  void* const site = __builtin_return_address(0);
  __cyg_profile_func_enter(reinterpret_cast<void*>(r->body), site);
  r->body(r->data);
  __cyg_profile_func_exit(reinterpret_cast<void*>(r->body), site);
}

using ParallelFn = void (*)(Body, void*, unsigned, unsigned);
using SectionsFn = void (*)(Body, void*, unsigned, unsigned, unsigned);
using LoopFn = void (*)(Body, void*, unsigned, long, long, long, long, unsigned);
using RuntimeLoopFn = void (*)(Body, void*, unsigned, long, long, long, unsigned);

ParallelFn g_parallel;
SectionsFn g_sections;
LoopFn g_loop_static, g_loop_dynamic, g_loop_guided, g_loop_nonmonotonic_dynamic,
    g_loop_nonmonotonic_guided;
RuntimeLoopFn g_loop_runtime, g_loop_nonmonotonic_runtime, g_loop_maybe_nonmonotonic_runtime;

template <class Fn>
Fn next(Fn& slot, const char* name) {
  if (slot != nullptr) return slot;
  // dlsym may call malloc, which a program may have replaced and instrumented.
  parlot::runtime::IgnoreHooksOnThisThread quiet;
  return parlot::runtime::next_symbol(slot, name);
}

}  // namespace

#define PARLOT_OPENMP_LOOP(NAME, SLOT)                                                        \
  [[gnu::visibility("default")]] void NAME(Body fn, void* data, unsigned threads, long start, \
                                           long end, long incr, long chunk, unsigned flags) { \
    Region r{fn, data};                                                                       \
    next(SLOT, #NAME)(run_region, &r, threads, start, end, incr, chunk, flags);               \
  }
#define PARLOT_OPENMP_RUNTIME_LOOP(NAME, SLOT)                                                \
  [[gnu::visibility("default")]] void NAME(Body fn, void* data, unsigned threads, long start, \
                                           long end, long incr, unsigned flags) {             \
    Region r{fn, data};                                                                       \
    next(SLOT, #NAME)(run_region, &r, threads, start, end, incr, flags);                      \
  }

extern "C" {

/// `#pragma omp parallel`: runs `fn(data)` on every thread of a team of
/// `threads` (0: the default), each run recorded as a frame of `fn`.
[[gnu::visibility("default")]] void GOMP_parallel(Body fn, void* data, unsigned threads,
                                                  unsigned flags) {
  Region r{fn, data};
  next(g_parallel, "GOMP_parallel")(run_region, &r, threads, flags);
}

/// `#pragma omp parallel sections` (`count` sections), recorded as above.
[[gnu::visibility("default")]] void GOMP_parallel_sections(Body fn, void* data, unsigned threads,
                                                           unsigned count, unsigned flags) {
  Region r{fn, data};
  next(g_sections, "GOMP_parallel_sections")(run_region, &r, threads, count, flags);
}

/// `#pragma omp parallel for schedule(...)`: the combined loops, recorded
/// as above; the loop's bounds and chunk pass through unchanged.
PARLOT_OPENMP_LOOP(GOMP_parallel_loop_static, g_loop_static)
PARLOT_OPENMP_LOOP(GOMP_parallel_loop_dynamic, g_loop_dynamic)
PARLOT_OPENMP_LOOP(GOMP_parallel_loop_guided, g_loop_guided)
PARLOT_OPENMP_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic, g_loop_nonmonotonic_dynamic)
PARLOT_OPENMP_LOOP(GOMP_parallel_loop_nonmonotonic_guided, g_loop_nonmonotonic_guided)
PARLOT_OPENMP_RUNTIME_LOOP(GOMP_parallel_loop_runtime, g_loop_runtime)
PARLOT_OPENMP_RUNTIME_LOOP(GOMP_parallel_loop_nonmonotonic_runtime, g_loop_nonmonotonic_runtime)
PARLOT_OPENMP_RUNTIME_LOOP(GOMP_parallel_loop_maybe_nonmonotonic_runtime,
                           g_loop_maybe_nonmonotonic_runtime)

}  // extern "C"
