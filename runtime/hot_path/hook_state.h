// Per-thread and process-wide state the hooks test: the user API's pauses
// (runtime/user_api.cpp) and the process-wide switch that stops tracing.
#pragma once

#include <atomic>
#include <cstdint>

namespace parlot::runtime {

struct ThreadHookState {
  /// parlot_pause() depth of the thread. Nonzero: its hooks record nothing
  /// (mirrored in its trace's busy word as ThreadTrace::kPaused).
  int pause_depth = 0;
};

/// The calling thread's hook state; initial-exec TLS (one %fs load).
extern constinit thread_local ThreadHookState tls_hook_state
    __attribute__((tls_model("initial-exec")));

/// The one word every hook tests after raising its thread's busy flag:
/// bit 0 = tracing stopped for good (process end, write failure, failed
/// initialisation); bit 31 = a round of the idle flusher is on (idle_flusher.h:
/// a hook then checks whether its own thread is being flushed); bits 1-30 =
/// parlot_pause_all() depth x 2. Zero: hooks record.
extern std::atomic<std::uint32_t> g_hooks_off;

/// g_hooks_off's bit for "tracing stopped".
inline constexpr std::uint32_t kTracingStopped = 1;
/// g_hooks_off's unit of parlot_pause_all() depth.
inline constexpr std::uint32_t kPauseAllUnit = 2;
/// g_hooks_off's bit for "the idle flusher is in a round" (not a pause).
inline constexpr std::uint32_t kFlushRound = 0x80000000u;
/// g_hooks_off's bits of parlot_pause_all() depth.
inline constexpr std::uint32_t kPauseAllMask = ~(kTracingStopped | kFlushRound);

/// True once tracing has stopped for the process.
inline bool tracing_stopped() {
  return (g_hooks_off.load() & kTracingStopped) != 0;
}

/// Stops tracing for the process, for good.
inline void stop_tracing() {
  g_hooks_off.fetch_or(kTracingStopped);
}

/// True when parlot_pause_all() is in effect.
inline bool paused_all() {
  return (g_hooks_off.load(std::memory_order_relaxed) & kPauseAllMask) != 0;
}

/// True when hooks must not record: tracing stopped or paused for the
/// process (an idle-flusher round alone does not count).
inline bool hooks_off_for_process() {
  return (g_hooks_off.load() & ~kFlushRound) != 0;
}

}  // namespace parlot::runtime
