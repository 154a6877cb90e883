// State behind the user API (include/parlot/parlot.h, runtime/user_api.cpp)
// that the hooks read: whether the calling thread or the whole process is
// paused.
#pragma once

#include <atomic>

namespace parlot::runtime {

/// parlot_pause() depth of the calling thread (initial-exec TLS: one %fs
/// load in the hooks). Nonzero: the thread's hooks record nothing.
extern constinit thread_local int tls_pause_depth __attribute__((tls_model("initial-exec")));

/// parlot_pause_all() depth of the process. Nonzero: no hook records.
extern std::atomic<int> g_pause_all_depth;

/// True when the calling thread's hooks must record nothing (paused).
[[gnu::always_inline]] inline bool recording_paused() {
  return (tls_pause_depth | g_pause_all_depth.load(std::memory_order_relaxed)) != 0;
}

}  // namespace parlot::runtime
