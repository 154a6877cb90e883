// Internal entry points for Parlot's own wrapper libraries (today
// libparlotmpi.so, PARLOT_MPI_ARGS=1): attributes of a call, stored as a
// side record (docs/FORMAT.md "Version 2") about the call's entry event.
// Not part of the user API (include/parlot/parlot.h): a wrapper resolves
// them with dlsym, so it still loads and runs without the runtime. Never
// called from the hooks; each costs a TLS load and a few compares, plus a
// memcpy into the side-record buffer.
#include <cstddef>
#include <cstdint>

#include "hot_path/current_trace.h"
#include "hot_path/hook_state.h"
#include "ignore_hooks.h"

namespace {

using parlot::runtime::ThreadTrace;

// The calling thread's trace when its top shadow frame is `fn`'s and that
// frame's entry was recorded (not paused, not excluded, not dropped, not
// deeper than PARLOT_MAX_DEPTH), and nothing keeps a side record out (a
// hook of this thread interrupted by a signal handler, tracing stopped).
[[gnu::no_instrument_function]] ThreadTrace* trace_with_top_frame(const void* fn) {
  using namespace parlot::runtime;
  if (tls_hook_state.pause_depth != 0 || paused_all()) return nullptr;
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr || t->finished() || tracing_stopped()) return nullptr;
  if (t->busy.load(std::memory_order_relaxed) != 0) return nullptr;  // inside a hook, or paused
  const ShadowStack& s = t->stack();
  const std::size_t depth = s.depth();
  if (depth == 0 || depth > s.record_depth()) return nullptr;
  if (s.frame(depth - 1).function != reinterpret_cast<std::uintptr_t>(fn)) return nullptr;
  return t;
}

}  // namespace

#define PARLOT_INTERNAL extern "C" [[gnu::visibility("default"), gnu::no_instrument_function]]

/// Internal (libparlotmpi.so). Call right after the entry hook of `fn`:
/// returns the absolute index, in the calling thread's event stream, of the
/// entry event just recorded for `fn`, or UINT64_MAX when that entry was
/// not recorded (the thread's top shadow frame is not `fn`'s recorded
/// frame: paused, excluded by the record filter, dropped, too deep).
PARLOT_INTERNAL std::uint64_t parlot_rt_call_entry(const void* fn) {
  const ThreadTrace* t = trace_with_top_frame(fn);
  if (t == nullptr || t->events() == 0) return ~std::uint64_t{0};
  return t->events() - 1;  // the entry hook's last event is the entry
}

/// Internal (libparlotmpi.so). Records `n` bytes of `data` (at most 1024;
/// docs/FORMAT.md gives the layout for each kind) as a side record of
/// `kind` (a format::AuxKind) about event `entry`, the value
/// parlot_rt_call_entry(fn) returned, provided `fn`'s frame is still the
/// thread's top frame (call before its exit hook) and `entry` is a recorded
/// event. Otherwise records nothing. Keeps the thread's hooks out while it
/// writes (a full side-record buffer is written to the file).
PARLOT_INTERNAL void parlot_rt_call_attributes(const void* fn, std::uint64_t entry, unsigned kind,
                                               const void* data, std::size_t n) {
  using namespace parlot::runtime;
  ThreadTrace* t = trace_with_top_frame(fn);
  if (t == nullptr || entry >= t->events() || data == nullptr || kind == 0 || kind > 255) return;
  const IgnoreHooksOnThisThread ignore;
  t->add_side_record(static_cast<parlot::format::AuxKind>(kind), entry, data, n);
}

/// Internal (libparlotmpi.so). Makes the calling thread read the clock at
/// its next recorded event: the MPI wrappers call it before the entry and
/// the exit hook of every MPI call, so the time of a wait's both ends is
/// exact (to within PARLOT_CLOCK_TOLERANCE_NS). No-op on a thread without
/// a trace. A store into the thread's trace; no clock read here.
PARLOT_INTERNAL void parlot_rt_time_next_event(void) {
  if (ThreadTrace* t = parlot::runtime::tls_thread_trace) t->force_clock_read();
}
