// The runtime's definitions of the user API (include/parlot/parlot.h). They
// take the place of libparlot-api.so's no-op stubs when the runtime is
// loaded first (LD_PRELOAD, or linked before the stub library).
#include <cerrno>
#include <cstring>

#include "hot_path/current_trace.h"
#include "hot_path/hook_slow_paths.h"
#include "hot_path/hook_state.h"
#include "hot_path/trace_owner.h"
#include "hot_path/trace_writes.h"
#include "ignore_hooks.h"
#include "parlot/parlot.h"
#include "process/flight_dump.h"

using parlot::runtime::g_hooks_off;
using parlot::runtime::kPauseAllUnit;
using parlot::runtime::ThreadTrace;
using parlot::runtime::tls_hook_state;
using parlot::runtime::tls_thread_trace;

#define PARLOT_API extern "C" [[gnu::visibility("default"), gnu::no_instrument_function]]

namespace {

// A clock read of thread `t` between its events (a stall before the call
// pins the events before it), unless the thread is inside a hook (a signal
// handler that interrupted one) or paused. Waits while the idle flusher
// holds the thread.
[[gnu::no_instrument_function]] void read_clock_between_events(ThreadTrace* t) {
  if (t->finished() || t->busy.load(std::memory_order_relaxed) != 0) return;
  const parlot::runtime::IgnoreHooksOnThisThread ignore;
  t->clock_read_between_events();
}

}  // namespace

// A thread's pause lives in its trace's busy word (the hooks test it with
// no extra load) and, for a thread without a trace yet, in its hook state.
// Only the thread itself writes either.
PARLOT_API void parlot_pause(void) {
  if (++tls_hook_state.pause_depth != 1) return;
  if (ThreadTrace* t = tls_thread_trace) {
    read_clock_between_events(t);
    t->busy.store(t->busy.load(std::memory_order_relaxed) | ThreadTrace::kPaused,
                  std::memory_order_release);
  }
}

PARLOT_API void parlot_resume(void) {
  if (tls_hook_state.pause_depth <= 0 || --tls_hook_state.pause_depth != 0) return;
  if (ThreadTrace* t = tls_thread_trace) {
    t->busy.store(t->busy.load(std::memory_order_relaxed) & ~ThreadTrace::kPaused,
                  std::memory_order_release);
    read_clock_between_events(t);
  }
}

PARLOT_API void parlot_pause_all(void) {
  g_hooks_off.fetch_add(kPauseAllUnit, std::memory_order_relaxed);
}

PARLOT_API void parlot_resume_all(void) {
  std::uint32_t w = g_hooks_off.load(std::memory_order_relaxed);
  while ((w & parlot::runtime::kPauseAllMask) != 0 &&
         !g_hooks_off.compare_exchange_weak(w, w - kPauseAllUnit, std::memory_order_relaxed)) {
  }
}

PARLOT_API int parlot_flush(void) {
  using namespace parlot::runtime;
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr || t->finished()) return ENOENT;
  if (tracing_stopped()) return ECANCELED;
  // Keep the thread's own hooks (a signal handler) out while writing.
  const IgnoreHooksOnThisThread ignore;
  int err = t->flush_now();
  if (err == 0) flush_process_metadata();
  return err;
}

PARLOT_API int parlot_flight_dump(void) {
  using namespace parlot::runtime;
  if (!is_traced_process()) return ENOENT;
  // Outside the hooks (busy clear): the flusher holds this thread as any.
  return flight_dump_now(2000ull * 1000 * 1000);
}

/// Internal (libparlotmpi.so): called by the MPI_Abort wrappers (C and
/// Fortran) after the call's entry event and before the MPI library's
/// MPI_Abort, which never returns. In flight mode it dumps every thread's
/// window (as parlot_flight_dump(), holding the threads for at most 2 s),
/// so the dump ends in the MPI_Abort frame whatever then ends the process
/// (the MPI library's `_exit`, or the signal mpirun sends, which may be
/// SIGKILL). Nothing in normal mode, nor outside a traced process. Takes
/// nothing, returns nothing: the abort goes on whatever the dump's result
/// (parlot_flight_dump()'s errors).
extern "C" [[gnu::visibility("default"), gnu::no_instrument_function]] void parlot_rt_before_abort(
    void) {
  using namespace parlot::runtime;
  if (!is_traced_process() || !flight_mode()) return;
  flight_dump_now(2000ull * 1000 * 1000);
}

// A mark is a side record (format::AuxKind::kMark) placed before the
// thread's next event. Not recorded while the thread is paused, nor from a
// signal handler that interrupted one of the thread's hooks.
PARLOT_API void parlot_mark(const char* label) {
  using namespace parlot::runtime;
  if (label == nullptr || tls_hook_state.pause_depth != 0 || paused_all() || !is_traced_process()) {
    return;
  }
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr) t = attach_current_thread();
  if (t == nullptr || t->finished() || tracing_stopped()) return;
  if (t->busy.load(std::memory_order_relaxed) != 0) return;  // inside a hook, or paused
  const IgnoreHooksOnThisThread ignore;
  t->clock_read_between_events();  // a stall before the mark pins the events before it
  t->add_side_record(parlot::format::AuxKind::kMark, t->events(), label, std::strlen(label));
}

PARLOT_API int parlot_is_tracing(void) {
  return 1;
}
