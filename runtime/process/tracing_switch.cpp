// Switching tracing on and off while the program runs (tracing_switch.h).
#include "process/tracing_switch.h"

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "errno_keeper.h"
#include "hot_path/current_trace.h"
#include "hot_path/hook_slow_paths.h"
#include "hot_path/hook_state.h"
#include "ignore_hooks.h"
#include "process/idle_flusher.h"
#include "sleds/sled_patcher.h"
#include "time/monotonic_clock.h"

namespace parlot::runtime {
namespace {

pthread_mutex_t g_switch_lock = PTHREAD_MUTEX_INITIALIZER;
// On (1) or off (0): what the last switch asked. Written under
// g_switch_lock or by the toggle signal's compare-exchange.
std::atomic<int> g_on{1};
// The sleds' state the idle flusher is to apply (-1: nothing asked).
std::atomic<int> g_sleds_asked{-1};

// Records the switch in the calling thread's trace, if it has one and is
// outside its hooks. Async-signal-safe (as parlot_mark).
void record_switch(bool on) {
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr && on) t = attach_current_thread();
  if (t == nullptr || t->finished() || t->busy.load(std::memory_order_relaxed) != 0) return;
  const IgnoreHooksOnThisThread ignore;
  unsigned char data[1 + sizeof(std::uint64_t)];
  data[0] = on ? 1 : 0;
  const std::uint64_t ns = monotonic_ns();
  std::memcpy(data + 1, &ns, sizeof ns);
  t->clock_read_between_events();
  t->add_side_record(format::AuxKind::kTracingSwitched, t->events(), data, sizeof data);
}

// The hooks' half of a switch: pause or resume every thread. Lock-free.
void switch_hooks(bool on) {
  if (on) {
    std::uint32_t w = g_hooks_off.load(std::memory_order_relaxed);
    while ((w & kPauseAllMask) != 0 &&
           !g_hooks_off.compare_exchange_weak(w, w - kPauseAllUnit, std::memory_order_relaxed)) {
    }
  } else {
    g_hooks_off.fetch_add(kPauseAllUnit, std::memory_order_relaxed);
  }
}

// Before main and the program's own constructors (after the runtime's of
// priority 101). PARLOT_START=off: the sleds stay NOPs and the hooks
// paused; the process's trace is set up now all the same (its directory,
// the idle flusher, the toggle signal's handler), so that a signal can
// switch tracing on before any event. Otherwise the sleds of the objects
// loaded now are patched (those loaded later as they load).
[[gnu::constructor(102)]] void start_tracing() {
  const char* start = std::getenv("PARLOT_START");
  if (start != nullptr && std::strcmp(start, "off") == 0) {
    g_on.store(0);
    switch_hooks(false);
    const ErrnoKeeper keep_errno;
    attach_current_thread();  // sets the process up; paused, attaches nothing
    return;
  }
  set_sleds(true);
}

}  // namespace

bool switch_tracing(bool on) {
  pthread_mutex_lock(&g_switch_lock);
  const bool changed = g_on.load() != static_cast<int>(on);
  if (changed) {
    g_on.store(on ? 1 : 0);
    if (on) {
      set_sleds(true);
      switch_hooks(true);
    } else {
      switch_hooks(false);
      set_sleds(false);
    }
    g_sleds_asked.store(-1);
    record_switch(on);
    if (on) wake_idle_flusher();  // its clock tick starts again now
  }
  pthread_mutex_unlock(&g_switch_lock);
  return changed;
}

bool tracing_switched_off() {
  return g_on.load(std::memory_order_relaxed) == 0;
}

void toggle_tracing_from_signal() {
  int was = g_on.load();
  while (!g_on.compare_exchange_weak(was, was ^ 1)) {
  }
  const bool on = was == 0;
  switch_hooks(on);
  g_sleds_asked.store(on ? 1 : 0);
  record_switch(on);
  wake_idle_flusher();
}

void apply_requested_tracing_switch() {
  if (g_sleds_asked.load(std::memory_order_relaxed) < 0) return;
  pthread_mutex_lock(&g_switch_lock);
  const int asked = g_sleds_asked.exchange(-1);
  if (asked >= 0 && sleds_on() != (asked == 1)) set_sleds(asked == 1);
  pthread_mutex_unlock(&g_switch_lock);
}

}  // namespace parlot::runtime
