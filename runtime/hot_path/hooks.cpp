// The instrumentation hooks: gcc/clang -finstrument-functions call these at
// every function entry and exit. This is the hot path: no locks, no malloc,
// no syscalls (but when a thread's output buffer fills), no exceptions; one
// initial-exec TLS load. See docs/DESIGN.md for the event's whole journey.
#include <unwind.h>

#include <atomic>
#include <cstdint>

#include "errno_keeper.h"
#include "hot_path/current_trace.h"
#include "hot_path/hook_slow_paths.h"
#include "hot_path/hook_state.h"
#include "hot_path/stack_walk.h"
#include "hot_path/unwinder_cfa.h"
#include "libcalls/libcall_patcher.h"
#include "libcalls/libcall_shadow.h"
#include "sleds/sled_mirror.h"

using parlot::runtime::attach_current_thread;
using parlot::runtime::FunctionIds;
using parlot::runtime::g_function_ids;
using parlot::runtime::g_hooks_off;
using parlot::runtime::ThreadHookState;
using parlot::runtime::ThreadTrace;
using parlot::runtime::tls_hook_state;
using parlot::runtime::tls_thread_trace;

// libcall_trampolines.S: where a recorded library call (or a sled-traced
// function) returns to, and the library calls' entry stubs.
extern "C" char parlot_libcall_return_thunk[];
extern "C" char parlot_libcall_stubs[];

namespace parlot::runtime {
constinit thread_local ThreadHookState tls_hook_state __attribute__((tls_model("initial-exec")));
std::atomic<std::uint32_t> g_hooks_off{0};
}  // namespace parlot::runtime

namespace {

// Lowers the busy flag; a signal that arrived meanwhile was deferred by
// the runtime's handler and is raised again now (one load and a branch).
[[gnu::always_inline]] inline void end_hook(ThreadTrace* t) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->busy.store(0, std::memory_order_release);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (t->deferred_signals.load(std::memory_order_relaxed) != 0) [[unlikely]]
    parlot::runtime::raise_deferred_signals(t);
}

// Raises the thread's busy flag; returns false (flag as it was, event not
// recorded) when the thread is paused or when the hook is re-entered (a
// signal handler running instrumented code while this thread is inside a
// hook: counted as dropped, unless `entered` is the address of an entered
// function the record filter excludes). The caller then tests g_hooks_off (tracing
// stopped, paused for the process, or an idle-flusher round): the compiler
// fence pairs with the membarrier in finish_process() and the idle flusher.
[[gnu::always_inline]] inline bool raise_busy(ThreadTrace* t, std::uintptr_t entered = 0) {
  if (const int busy = t->busy.load(std::memory_order_relaxed); busy != 0) [[unlikely]] {
    if ((busy & ThreadTrace::kInHook) != 0 &&
        (entered == 0 || !g_function_ids.is_excluded(entered))) {
      ++t->dropped_events;
    }
    return false;
  }
  t->busy.store(ThreadTrace::kInHook, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return true;
}

// True when g_hooks_off is set. Acquire (a plain load on x86): a thread the
// idle flusher wrote sees the flusher's writes once it sees the round end.
[[gnu::always_inline]] inline bool hooks_off() {
  return g_hooks_off.load(std::memory_order_acquire) != 0;
}

// After a longjmp or a catch: unwinds the real stack from here (the entry
// hook of a function called by a live frame) and drops the shadow frames
// that are gone. Never inlined: kept out of the hooks' frames.
[[gnu::noinline, gnu::cold]] void resync_with_real_stack(ThreadTrace* t) {
  t->resync_pending.store(false, std::memory_order_relaxed);
  constexpr std::size_t kMax = 256;
  std::uintptr_t return_addresses[kMax];
  // Skipped: the return addresses into the entry hook and into the function
  // entered (not on the stack yet). Its caller's frame holds the first
  // return address that can belong to a live shadow frame.
  const std::size_t n = parlot::runtime::walk_own_stack(return_addresses, kMax, 2);
  // The frame after a library call's return thunk has its return address
  // minus one (libcall_trampolines.S).
  bool after_thunk = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (after_thunk) ++return_addresses[i];
    after_thunk =
        return_addresses[i] == reinterpret_cast<std::uintptr_t>(parlot_libcall_return_thunk);
  }
  t->resync(return_addresses, n);
}

// Exit of a function whose frame is not on top of the shadow stack: a
// function the record filter excludes (never pushed), or frames whose exits
// were missed, or an unmatched exit.
[[gnu::noinline]] void exit_below_top(ThreadTrace* t, std::uintptr_t f, std::uintptr_t sp,
                                      bool at_cfa) {
  if (g_function_ids.filtering() && g_function_ids.is_excluded(f)) {
    t->last_excluded = f;
    return;
  }
  t->on_exit_below_top(f, sp, at_cfa);
}

// Once the busy flag is up: the ID to record `f` under (`seen`: its ID if
// already known, else 0). Returns 0 when it is not recorded: the function
// table is full (counted as dropped) or the record filter excludes it at
// first sight (its callees then nest under its caller).
[[gnu::always_inline]] inline std::uint32_t recorded_id(ThreadTrace* t, std::uintptr_t f,
                                                        std::uint32_t seen) {
  const std::uint32_t id = seen != 0 ? seen : g_function_ids.lookup(f);
  if (FunctionIds::is_recorded(id)) [[likely]]
    return id;
  if (id == 0) {
    ++t->dropped_events;  // function table full (PARLOT_MAX_FUNCTIONS)
  } else {
    t->last_excluded = f;
  }
  return 0;
}

// recorded_id() for an instrumented function's entry, after resyncing the
// shadow stack if a stack cut is pending.
[[gnu::always_inline]] inline std::uint32_t id_to_record(ThreadTrace* t, std::uintptr_t f,
                                                         std::uint32_t seen) {
  if (t->resync_pending) [[unlikely]]
    resync_with_real_stack(t);
  return recorded_id(t, f, seen);
}

// The entry hook's work once the busy flag is up.
[[gnu::always_inline]] inline void record_entry(ThreadTrace* t, std::uintptr_t f,
                                                std::uintptr_t call_site, std::uintptr_t sp,
                                                std::uint32_t seen) {
  if (const std::uint32_t id = id_to_record(t, f, seen); id != 0) t->on_enter(f, call_site, sp, id);
}

// The exit hook's work once the busy flag is up.
[[gnu::always_inline]] inline void record_exit(ThreadTrace* t, std::uintptr_t f, std::uintptr_t sp,
                                               bool at_cfa) {
  if (!t->on_exit_top(f, sp, at_cfa)) [[unlikely]]
    exit_below_top(t, f, sp, at_cfa);  // also an excluded function (never pushed)
}

// A hook that found g_hooks_off set: records only when that was an idle-
// flusher round (after waiting while it holds this thread). Out of line and
// reached by a tail call, so the hooks' fast path saves no more registers.
[[gnu::noinline, gnu::cold]] void enter_with_hooks_off(ThreadTrace* t, std::uintptr_t f,
                                                       std::uintptr_t call_site,
                                                       std::uintptr_t sp) {
  const std::uint32_t seen = g_function_ids.find(f);
  if (seen == FunctionIds::kExcluded) {
    t->last_excluded = f;
    return end_hook(t);
  }
  // Waiting out a round only spins and yields (no errno); recording after
  // it may write (first sight, a full block). Paused hooks
  // (parlot_pause_all, tracing stopped) thus cost no errno save.
  if (parlot::runtime::hook_may_record_after_flush_round(t)) {
    const parlot::runtime::ErrnoKeeper keep_errno;
    record_entry(t, f, call_site, sp, seen);
  }
  end_hook(t);
}

// An entry whose function was not seen before (its ID is assigned now) or
// that must first check the shadow stack against the real one (resync):
// the rest of the hook, out of line and reached by a tail call, like the
// other rare cases, so that the fast path keeps only the thread's trace in
// a callee-saved register (issue 12: 4 register saves and restores fewer
// per entry).
[[gnu::noinline]] void enter_first_sight_or_resync(ThreadTrace* t, std::uintptr_t f,
                                                   std::uintptr_t call_site, std::uintptr_t sp,
                                                   std::uint32_t seen) {
  {
    const parlot::runtime::ErrnoKeeper keep_errno;  // first sight: load map, names
    record_entry(t, f, call_site, sp, seen);
  }
  end_hook(t);
}

[[gnu::noinline, gnu::cold]] void exit_with_hooks_off(ThreadTrace* t, std::uintptr_t f,
                                                      std::uintptr_t sp, bool at_cfa) {
  if (parlot::runtime::hook_may_record_after_flush_round(t)) {
    const parlot::runtime::ErrnoKeeper keep_errno;  // as enter_with_hooks_off
    record_exit(t, f, sp, at_cfa);
  }
  end_hook(t);
}

// The rest of an event the fast path of a hook left (ThreadTrace::
// enter_fast, exit_fast), then end_hook(). Out of line and reached by tail
// calls: the hooks' fast path then calls nothing and needs no callee-saved
// register (issue 12: no register saves and restores, no stack frame).
[[gnu::noinline]] void put_entry_and_end(ThreadTrace* t, std::uint32_t id) {
  t->put_entry(id);  // a match ends, the countdown runs out, or another codec
  end_hook(t);
}
[[gnu::noinline]] void enter_and_end(ThreadTrace* t, std::uintptr_t f, std::uintptr_t call_site,
                                     std::uintptr_t sp, std::uint32_t id) {
  t->on_enter(f, call_site, sp, id);  // shadow-stack correction, a new depth, a large ID
  end_hook(t);
}
[[gnu::noinline]] void put_exit_and_end(ThreadTrace* t) {
  t->put_exit();
  end_hook(t);
}
[[gnu::noinline]] void exit_below_top_and_end(ThreadTrace* t, std::uintptr_t f, std::uintptr_t sp,
                                              bool at_cfa) {
  exit_below_top(t, f, sp, at_cfa);
  end_hook(t);
}

// An entry whose ID codec 2's open match did not predict: the ID lookup,
// then as enter_hook did before that prediction (issue 12). Out of line,
// reached by a tail call.
[[gnu::noinline]] void enter_unpredicted(ThreadTrace* t, std::uintptr_t f, std::uintptr_t call_site,
                                         std::uintptr_t sp) {
  const std::uint32_t seen = g_function_ids.find(f);
  if (seen == FunctionIds::kExcluded) [[unlikely]] {
    t->last_excluded = f;
    return end_hook(t);
  }
  if (seen == 0 || t->resync_pending.load(std::memory_order_relaxed)) [[unlikely]]
    return enter_first_sight_or_resync(t, f, call_site, sp, seen);
  // `seen` is an ID: neither 0 nor kExcluded.
  switch (t->enter_fast(f, call_site, sp, seen)) {
    case ThreadTrace::FastEvent::kDone:
      return end_hook(t);
    case ThreadTrace::FastEvent::kPut:
      return put_entry_and_end(t, seen);
    case ThreadTrace::FastEvent::kNotFound:
      break;
  }
  return enter_and_end(t, f, call_site, sp, seen);
}

// The entry hook once the thread has its trace `t`.
[[gnu::always_inline]] inline void enter_hook(ThreadTrace* t, std::uintptr_t f,
                                              std::uintptr_t call_site, std::uintptr_t sp) {
  if (f == t->last_excluded) [[unlikely]]
    return;  // the record filter's last excluded function: one compare
  if (!raise_busy(t, f)) return;
  if (hooks_off()) [[unlikely]]
    return enter_with_hooks_off(t, f, call_site, sp);
  // The common case: codec 2's open match predicts this entry. Checking
  // the predicted ID's address is one load from a dense array, where
  // finding `f`'s ID hashes into a sparse table (issue 12).
  if (const std::uint32_t id = t->predicted_event();
      id < 0x8000 && g_function_ids.address_by_id(id) == f &&
      !t->resync_pending.load(std::memory_order_relaxed) &&
      t->enter_predicted(f, call_site, sp, id)) [[likely]]
    return end_hook(t);
  return enter_unpredicted(t, f, call_site, sp);
}

// The entry hook of a thread's first event: attaches the thread (creates
// its trace), then records. Out of line: once per thread.
[[gnu::noinline, gnu::cold]] void enter_on_new_thread(std::uintptr_t f, std::uintptr_t call_site,
                                                      std::uintptr_t sp) {
  const parlot::runtime::ErrnoKeeper keep_errno;  // files, maps, a fork child's directory
  ThreadTrace* t = attach_current_thread();
  if (t != nullptr) enter_hook(t, f, call_site, sp);
}

}  // namespace

extern "C" {

/// Entry hook (gcc/clang -finstrument-functions ABI): `fn` is the address of
/// the function being entered, `call_site` the return address into its
/// caller. Records an entry event (function ID) for the calling thread.
[[gnu::visibility("default"), gnu::no_instrument_function, gnu::hot]] void __cyg_profile_func_enter(
    void* fn, void* call_site) {
  // The hook's CFA is the instrumented function's stack pointer at the call.
  const auto f = reinterpret_cast<std::uintptr_t>(fn);
  const auto sp = reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa());
  const auto site = reinterpret_cast<std::uintptr_t>(call_site);
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr) [[unlikely]]
    return enter_on_new_thread(f, site, sp);
  enter_hook(t, f, site, sp);
}

/// Exit hook: records an exit event (ID 0) for the frame of `fn`.
[[gnu::visibility("default"), gnu::no_instrument_function, gnu::hot]] void __cyg_profile_func_exit(
    void* fn, void* call_site) {
  const auto f = reinterpret_cast<std::uintptr_t>(fn);
  const auto sp = reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa());
  // gcc -O2 may restore the frame and then jump to this hook: its return
  // address is then the function's own, and `sp` is the function's CFA.
  const bool at_cfa = __builtin_return_address(0) == call_site;
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr) [[unlikely]]
    return;  // no entry was recorded on this thread
  if (f == t->last_excluded) [[unlikely]]
    return;
  if (!raise_busy(t)) return;
  if (hooks_off()) [[unlikely]]
    return exit_with_hooks_off(t, f, sp, at_cfa);
  switch (t->exit_fast(f, sp, at_cfa)) {
    case ThreadTrace::FastEvent::kDone:
      return end_hook(t);
    case ThreadTrace::FastEvent::kPut:
      return put_exit_and_end(t);
    case ThreadTrace::FastEvent::kNotFound:
      break;
  }
  return exit_below_top_and_end(t, f, sp, at_cfa);  // also an excluded function (never pushed)
}

}  // extern "C"

// Library calls (PARLOT_LIBCALLS; libcall_patcher.h, libcall_trampolines.S,
// docs/DESIGN.md "Library calls"). A call is recorded as an entry of the
// library function and, when it returns, an exit: its return address, at
// stack slot `slot`, is replaced by the return thunk's while the real one
// waits in the slot's shadow word.
namespace {

[[gnu::always_inline]] inline void record_libcall_entry(std::uintptr_t f, std::uintptr_t slot) {
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr) [[unlikely]] {
    const parlot::runtime::ErrnoKeeper keep_errno;
    t = attach_current_thread();
    if (t == nullptr) return;
  }
  // Only with the return address on the thread's own stack (its shadow is
  // mapped there), one compare.
  if (slot - t->libcall_lo >= t->libcall_hi - t->libcall_lo) [[unlikely]]
    return;
  if (f == t->last_excluded) [[unlikely]]
    return;
  const std::uint32_t seen = g_function_ids.find(f);
  if (seen == FunctionIds::kExcluded) [[unlikely]] {
    t->last_excluded = f;
    return;
  }
  if (!raise_busy(t)) return;
  if (hooks_off()) [[unlikely]] {
    const parlot::runtime::ErrnoKeeper keep_errno;
    if (!parlot::runtime::hook_may_record_after_flush_round(t)) {
      end_hook(t);
      return;
    }
  }
  // A pending stack cut is left to the next instrumented entry: a library
  // call's frame lies below every live frame, so the stack-pointer rules
  // place it, and the cut may be the one this call is about to make (a
  // thread cancelled in it, whose cleanup handlers' entries must resync).
  if (const std::uint32_t id = recorded_id(t, f, seen); id != 0) {
    auto* return_address = reinterpret_cast<std::uintptr_t*>(slot);
    std::uintptr_t call_site = *return_address;
    // A tail call from a sled-traced function: its return address leads to
    // the thunk already, the real one is in the shadow.
    const bool redirected =
        call_site == reinterpret_cast<std::uintptr_t>(parlot_libcall_return_thunk);
    if (redirected) call_site = *parlot::runtime::libcall_shadow_of(slot) + 1;
    t->force_clock_read();  // a library call may wait: its entry's time exact
    if (t->on_libcall_enter(f, call_site, slot, id)) {
      if (!redirected) {
        // Minus one: the caller's address as an unwinder reads it
        // (libcall_trampolines.S, the thunk's unwind information).
        *parlot::runtime::libcall_shadow_of(slot) = call_site - 1;
        *return_address = reinterpret_cast<std::uintptr_t>(parlot_libcall_return_thunk);
      }
      // A thread with a cancellation requested may be cancelled in this
      // call. When its caller pushed the cleanup handler, glibc longjmps
      // there before the unwinder reaches the thunk's personality routine:
      // only the handler's entry hook, resyncing, can end this call.
      if (t->cancel_requested.load(std::memory_order_relaxed)) [[unlikely]]
        t->resync_pending.store(true, std::memory_order_relaxed);
    }
  }
  end_hook(t);
}

// True when `f` is a library call's (an entry stub's address), not a
// sled-traced function's.
[[gnu::always_inline]] inline bool is_libcall(std::uintptr_t f) {
  const auto stubs = reinterpret_cast<std::uintptr_t>(parlot_libcall_stubs);
  return f - stubs < parlot::runtime::kLibcallStubs * 16;
}

// The end of the library call, or of the sled-traced function, whose
// return address was at `slot`: its return reached the thunk, or an
// exception or cancellation unwound it.
void record_libcall_exit(ThreadTrace* t, std::uintptr_t slot) {
  if (t == nullptr || !raise_busy(t)) return;
  // The end of a library call's wait: its exit's time exact.
  if (is_libcall(t->function_at(slot))) t->force_clock_read();
  if (!hooks_off()) {
    t->on_libcall_exit(slot);
  } else {
    // The call's own errno is what the program reads next.
    const parlot::runtime::ErrnoKeeper keep_errno;
    if (parlot::runtime::hook_may_record_after_flush_round(t)) t->on_libcall_exit(slot);
  }
  end_hook(t);
}

}  // namespace

extern "C" {

/// Called by entry stub `index` (libcall_trampolines.S) with the stack slot
/// of the call's return address: records the entry and returns the
/// function to jump to.
[[gnu::visibility("hidden"), gnu::no_instrument_function]] std::uintptr_t parlot_libcall_enter(
    std::uint32_t index, std::uintptr_t* slot) {
  const parlot::runtime::LibcallStub& stub = parlot::runtime::g_libcall_stubs[index];
  record_libcall_entry(stub.function, reinterpret_cast<std::uintptr_t>(slot));
  return stub.target;
}

/// Called by the return thunk with the stack pointer after the return
/// (the slot + 8): records the exit and returns the real return address.
[[gnu::visibility("hidden"), gnu::no_instrument_function]] std::uintptr_t parlot_libcall_exit(
    std::uintptr_t sp) {
  const std::uintptr_t slot = sp - sizeof(std::uintptr_t);
  const std::uintptr_t return_address = *parlot::runtime::libcall_shadow_of(slot) + 1;
  // A trace to attach to: the child of a fork() made by this very call
  // resumes the parent's trace here.
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr) [[unlikely]] {
    const parlot::runtime::ErrnoKeeper keep_errno;  // the call's own errno
    t = attach_current_thread();
  }
  record_libcall_exit(t, slot);
  return return_address;
}

/// Personality routine of the return thunk's frame (libcall_trampolines.S),
/// called by the unwinder (libgcc's, the C++ ABI's interface) for each
/// recorded library call an exception or a thread cancellation unwinds:
/// in the cleanup phase it records the call's exit. A forced unwind
/// (pthread_exit, cancellation) also marks a stack cut: in C, glibc then
/// longjmps to the frame that pushed each cleanup handler, leaving the
/// instrumented frames in between without their exits, and the handler's
/// entry must resync. The unwinding goes on.
[[gnu::visibility("hidden"), gnu::no_instrument_function]] _Unwind_Reason_Code
parlot_libcall_personality(int, _Unwind_Action actions, _Unwind_Exception_Class, _Unwind_Exception*,
                           _Unwind_Context* context) {
  if ((actions & _UA_CLEANUP_PHASE) == 0) return _URC_CONTINUE_UNWIND;
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr) return _URC_CONTINUE_UNWIND;
  if ((actions & _UA_FORCE_UNWIND) != 0) t->resync_pending.store(true, std::memory_order_relaxed);
  // The thunk frame's CFA is the library function's: its slot + 8. Asked
  // of the unwinder calling this (in a C program, the libgcc_s that glibc
  // loaded, which the global scope does not see).
  const std::uintptr_t cfa = parlot::runtime::unwinder_cfa(
      context, __builtin_extract_return_addr(__builtin_return_address(0)));
  if (cfa != 0) record_libcall_exit(t, cfa - sizeof(std::uintptr_t));
  return _URC_CONTINUE_UNWIND;
}

}  // extern "C"

// Sleds (-fpatchable-function-entry; sleds/sled_patcher.h, docs/DESIGN.md
// "Sleds"): a patched sled calls parlot_sled_entry (sleds/sled_trampolines.S),
// which calls this. The entry is recorded by the same code as the entry
// hook's; the exit by the return thunk of library calls, where the
// function's return address now leads.
namespace {

// endbr64 (f3 0f 1e fa), read as a little-endian word: -fcf-protection
// puts it before the sled, at the function's address.
constexpr std::uint32_t kEndbr64 = 0xfa1e0ff3u;

// The function whose sled ends at `resume`.
[[gnu::always_inline]] inline std::uintptr_t sled_function(std::uintptr_t resume) {
  std::uintptr_t f = resume - parlot::runtime::kSledBytes;
  std::uint32_t before;
  __builtin_memcpy(&before, reinterpret_cast<const void*>(f - 4), sizeof before);
  if (before == kEndbr64) [[unlikely]]
    f -= 4;
  return f;
}

// A thread's first sled entry: attaches the thread and maps its stack's
// shadow. Returns its trace, or nullptr (not traced, no shadow).
[[gnu::noinline, gnu::cold]] ThreadTrace* sled_thread(ThreadTrace* t) {
  const parlot::runtime::ErrnoKeeper keep_errno;
  if (t == nullptr) t = attach_current_thread();
  if (t != nullptr) t->map_return_shadow();
  return t;
}

}  // namespace

extern "C" {

/// Called by parlot_sled_entry for a patched sled ending at `resume` (the
/// function's address + 5, or + 9 after an endbr64), `slot` being where
/// the function's return address is: records the entry of the function as
/// __cyg_profile_func_enter would (its stack pointer: the slot) and, when
/// its frame was pushed, replaces its return address by the return thunk's,
/// the real one going to the slot's shadow word, so that its return records
/// the exit. Hot path: the hooks' rules.
[[gnu::visibility("hidden"), gnu::no_instrument_function, gnu::hot]] void parlot_sled_enter(
    std::uintptr_t resume, std::uintptr_t* slot) {
  const std::uintptr_t f = sled_function(resume);
  const auto s = reinterpret_cast<std::uintptr_t>(slot);
  ThreadTrace* t = tls_thread_trace;
  // Only with the return address on the thread's own stack (its shadow is
  // mapped there): a function whose return cannot be seen is not entered.
  if (t == nullptr || s - t->libcall_lo >= t->libcall_hi - t->libcall_lo) [[unlikely]] {
    if (t != nullptr && t->return_shadow_tried) return;
    t = sled_thread(t);
    if (t == nullptr || s - t->libcall_lo >= t->libcall_hi - t->libcall_lo) return;
  }
  std::uintptr_t call_site = *slot;
  const auto thunk = reinterpret_cast<std::uintptr_t>(parlot_libcall_return_thunk);
  // A tail call from a sled-traced function: the return address leads to
  // the thunk already; this function nests in that one and ends with it.
  const bool redirected = call_site == thunk;
  if (redirected) [[unlikely]]
    call_site = *parlot::runtime::libcall_shadow_of(s) + 1;
  enter_hook(t, f, call_site, s);
  if (!redirected && t->top_is(f, s)) {
    // Minus one: the caller's address as an unwinder reads it (the thunk's
    // unwind information, libcall_trampolines.S).
    *parlot::runtime::libcall_shadow_of(s) = call_site - 1;
    *slot = thunk;
  }
}

}  // extern "C"
