// Per-thread and process-wide state the hooks test before anything else:
// the user API's pauses (runtime/user_api.cpp) and the last function the
// record filter excluded on this thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace parlot::runtime {

struct ThreadHookState {
  /// parlot_pause() depth of the thread. Nonzero: its hooks record nothing.
  int pause_depth = 0;
  /// The last function the record filter excluded that this thread called
  /// (0: none): its hooks return after one compare. Any other excluded
  /// function costs an ID-table lookup, then takes this place.
  std::uintptr_t last_excluded = 0;
};

/// The calling thread's hook state; initial-exec TLS (one %fs load).
extern constinit thread_local ThreadHookState tls_hook_state
    __attribute__((tls_model("initial-exec")));

/// parlot_pause_all() depth of the process. Nonzero: no hook records.
extern std::atomic<int> g_pause_all_depth;

/// True when the calling thread's hooks must record nothing (paused).
[[gnu::always_inline]] inline bool recording_paused() {
  return (tls_hook_state.pause_depth | g_pause_all_depth.load(std::memory_order_relaxed)) != 0;
}

}  // namespace parlot::runtime
