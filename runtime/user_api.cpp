// The runtime's definitions of the user API (include/parlot/parlot.h). They
// take the place of libparlot-api.so's no-op stubs when the runtime is
// loaded first (LD_PRELOAD, or linked before the stub library).
#include <cerrno>
#include <cstring>

#include "hook_state.h"
#include "parlot/parlot.h"
#include "process_trace.h"

using parlot::runtime::g_pause_all_depth;
using parlot::runtime::tls_hook_state;

#define PARLOT_API extern "C" [[gnu::visibility("default"), gnu::no_instrument_function]]

PARLOT_API void parlot_pause(void) {
  ++tls_hook_state.pause_depth;
}

PARLOT_API void parlot_resume(void) {
  if (tls_hook_state.pause_depth > 0) --tls_hook_state.pause_depth;
}

PARLOT_API void parlot_pause_all(void) {
  g_pause_all_depth.fetch_add(1, std::memory_order_relaxed);
}

PARLOT_API void parlot_resume_all(void) {
  int d = g_pause_all_depth.load(std::memory_order_relaxed);
  while (d > 0 && !g_pause_all_depth.compare_exchange_weak(d, d - 1, std::memory_order_relaxed)) {
  }
}

PARLOT_API int parlot_flush(void) {
  using namespace parlot::runtime;
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr || t->finished()) return ENOENT;
  if (g_tracing_stopped.load()) return ECANCELED;
  // Keep the thread's own hooks (a signal handler) out while writing.
  const IgnoreHooksOnThisThread ignore;
  int err = t->flush_now();
  if (err == 0) flush_process_metadata();
  return err;
}

// A mark is a side record (format::AuxKind::kMark) placed before the
// thread's next event. Not recorded while the thread is paused, nor from a
// signal handler that interrupted one of the thread's hooks.
PARLOT_API void parlot_mark(const char* label) {
  using namespace parlot::runtime;
  if (label == nullptr || recording_paused() || !is_traced_process()) return;
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr) t = attach_current_thread();
  if (t == nullptr || t->finished() || g_tracing_stopped.load()) return;
  if (t->busy.load(std::memory_order_relaxed) != 0) return;  // inside a hook
  const IgnoreHooksOnThisThread ignore;
  t->add_side_record(parlot::format::AuxKind::kMark, t->events(), label, std::strlen(label));
}

PARLOT_API int parlot_is_tracing(void) {
  return 1;
}
