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
/// initialisation); the other bits = parlot_pause_all() depth x 2. Zero:
/// hooks record.
extern std::atomic<std::uint32_t> g_hooks_off;

/// g_hooks_off's bit for "tracing stopped".
inline constexpr std::uint32_t kTracingStopped = 1;
/// g_hooks_off's unit of parlot_pause_all() depth.
inline constexpr std::uint32_t kPauseAllUnit = 2;

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
  return g_hooks_off.load(std::memory_order_relaxed) >= kPauseAllUnit;
}

}  // namespace parlot::runtime
