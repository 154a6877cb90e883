// The instrumentation hooks: gcc/clang -finstrument-functions call these at
// every function entry and exit. This is the hot path: no locks, no malloc,
// no syscalls (but when a thread's output buffer fills), no exceptions; one
// initial-exec TLS load. See docs/DESIGN.md for the event's whole journey.
#include <atomic>
#include <cstdint>

#include "process_trace.h"

using parlot::runtime::attach_current_thread;
using parlot::runtime::g_function_ids;
using parlot::runtime::g_tracing_stopped;
using parlot::runtime::ThreadTrace;
using parlot::runtime::tls_thread_trace;

namespace {

// Raises the thread's busy flag; returns false (flag lowered again, event
// dropped) when the hook is re-entered (a signal handler running
// instrumented code while this thread is inside a hook) or tracing stopped.
// The compiler fence pairs with the membarrier in finish_process().
[[gnu::always_inline]] inline bool begin_hook(ThreadTrace* t) {
  if (t->busy.load(std::memory_order_relaxed) != 0) [[unlikely]] {
    ++t->dropped_events;
    return false;
  }
  t->busy.store(1, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (g_tracing_stopped.load(std::memory_order_relaxed)) [[unlikely]] {
    t->busy.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

[[gnu::always_inline]] inline void end_hook(ThreadTrace* t) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->busy.store(0, std::memory_order_release);
}

}  // namespace

extern "C" {

/// Entry hook (gcc/clang -finstrument-functions ABI): `fn` is the address of
/// the function being entered, `call_site` the return address into its
/// caller. Records an entry event (function ID) for the calling thread.
[[gnu::visibility("default"), gnu::no_instrument_function, gnu::hot]] void __cyg_profile_func_enter(
    void* fn, void* call_site) {
  // The hook's CFA is the instrumented function's stack pointer at the call.
  const auto sp = reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa());
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr) [[unlikely]] {
    t = attach_current_thread();
    if (t == nullptr) return;
  }
  if (!begin_hook(t)) return;
  const auto f = reinterpret_cast<std::uintptr_t>(fn);
  const std::uint32_t id = g_function_ids.lookup(f);
  if (id != 0) [[likely]] {
    t->on_enter(f, reinterpret_cast<std::uintptr_t>(call_site), sp, id);
  } else {
    ++t->dropped_events;  // function table full (PARLOT_MAX_FUNCTIONS)
  }
  end_hook(t);
}

/// Exit hook: records an exit event (ID 0) for the frame of `fn`.
[[gnu::visibility("default"), gnu::no_instrument_function, gnu::hot]] void __cyg_profile_func_exit(
    void* fn, void* call_site) {
  const auto sp = reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa());
  // gcc -O2 may restore the frame and then jump to this hook: its return
  // address is then the function's own, and `sp` is the function's CFA.
  const bool at_cfa = __builtin_return_address(0) == call_site;
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr) [[unlikely]]
    return;  // no entry was recorded on this thread
  if (!begin_hook(t)) return;
  t->on_exit(reinterpret_cast<std::uintptr_t>(fn), sp, at_cfa);
  end_hook(t);
}

}  // extern "C"

namespace {

// Initialisation is lazy (the first event creates the process directory),
// so a process that loads the runtime but runs no instrumented code (a shell,
// `timeout`, any uninstrumented tool under LD_PRELOAD) leaves nothing behind.
// The trace ends after the program's atexit handlers and static destructors.
[[gnu::destructor(101)]] void parlot_runtime_finish() {
  parlot::runtime::finish_process();
}

}  // namespace
