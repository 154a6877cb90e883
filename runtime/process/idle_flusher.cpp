#include "process/idle_flusher.h"

#include "libcalls/libcall_patcher.h"
#include "sleds/sled_patcher.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include <atomic>
#include <cstdlib>

#include "hot_path/hook_slow_paths.h"
#include "hot_path/hook_state.h"
#include "hot_path/trace_writes.h"
#include "ignore_hooks.h"
#include "io/own_fd.h"
#include "process/thread_fence.h"
#include "process/thread_index.h"
#include "process/thread_registry.h"
#include "process/tracing_switch.h"
#include "time/clock_tick.h"
#include "time/monotonic_clock.h"

namespace parlot::runtime {
namespace {

// The process whose flusher thread runs (0: none). A fork child has none,
// whether or not the runtime's fork handlers ran (a flusher started before
// main, in a process that forks before its first event).
std::atomic<pid_t> g_flusher_pid{0};
// Set once the process's tracing is initialised with membarrier registered:
// a flusher started before main makes no round before.
std::atomic<bool> g_rounds_enabled{false};
// True while a round holds threads (finish_process waits for its end).
std::atomic<bool> g_round_on{false};
// Round period (ns): PARLOT_FLUSH_MS / 2. Atomic: a flusher started before
// main gets the period the process's configuration says at its first event.
std::atomic<std::uint64_t> g_period_ns{0};
// The flusher's kernel thread id, published by the thread itself (0 until
// it runs), and the futex word it sleeps on: pause_idle_flusher() sets it
// to 1 and wakes the thread, which then ends.
std::atomic<pid_t> g_flusher_tid{0};
std::atomic<std::uint32_t> g_stop_flusher{0};
// The futex word the flusher sleeps on between rounds: whoever wants it
// awake (pause_idle_flusher, flush_all_threads_now) changes it and wakes
// it, so a wake-up between the flusher's check and its sleep is not lost.
std::atomic<std::uint32_t> g_wake_word{0};
// Rounds of every thread asked for (flush_all_threads_now) and done: a
// request n is served once g_forced_done reaches n.
std::atomic<std::uint32_t> g_forced_asked{0};
std::atomic<std::uint32_t> g_forced_done{0};

void relax(unsigned spins) {
  if (spins < 64) {
    __builtin_ia32_pause();
  } else {
    sched_yield();
  }
}

// How long a round of every thread waits in all for threads that were
// inside a hook when it began (ns).
constexpr std::uint64_t kHeldWaitNs = 50ull * 1000 * 1000;

// One round over the registry (under its lock: no thread starts, ends or
// forks meanwhile). `every_thread`: write every thread that holds data,
// not only those whose flush is due.
void flush_round(bool every_thread) {
  if (!g_rounds_enabled.load(std::memory_order_acquire)) return;
  ThreadTrace* const head = lock_thread_registry();
  g_round_on.store(true);
  if (tracing_stopped() || head == nullptr) {
    g_round_on.store(false);
    unlock_thread_registry();
    return;
  }
  for (ThreadTrace* t = head; t != nullptr; t = t->next) t->flush_claim.store(true);
  g_hooks_off.fetch_or(kFlushRound);
  fence_all_threads();
  const std::uint64_t now = monotonic_ns();
  // A thread inside a hook (or the runtime's own code) is left alone; one
  // outside waits in its next hook while claimed. Release at once those
  // with nothing due, so busy threads wait for no write.
  for (ThreadTrace* t = head; t != nullptr; t = t->next) {
    // A thread inside a hook is changing its trace: nothing of it is read
    // now. A round of every thread keeps it claimed and looks below.
    if ((t->busy.load(std::memory_order_acquire) & ThreadTrace::kInHook) != 0) {
      if (!every_thread) t->flush_claim.store(false, std::memory_order_release);
      continue;
    }
    // A flight dump (flight_dump.h) writes every thread's window.
    const bool due =
        every_thread ? t->flight() || t->holds_unwritten_data() : t->idle_flush_due(now);
    if (!due) t->flush_claim.store(false, std::memory_order_release);
  }
  // A round of every thread waits (bounded) for the threads that were
  // inside a hook: once seen outside, or parked at its next hook (which
  // meets kFlushRound, set before the fence), a thread is held.
  if (every_thread) {
    const std::uint64_t deadline = monotonic_ns() + kHeldWaitNs;
    for (ThreadTrace* t = head; t != nullptr; t = t->next) {
      if (!t->flush_claim.load(std::memory_order_relaxed)) continue;
      for (unsigned spins = 0;; ++spins) {
        if ((t->busy.load(std::memory_order_acquire) & ThreadTrace::kInHook) == 0 ||
            t->parked_for_flusher.load(std::memory_order_acquire)) {
          // Held now: its trace may be read.
          if (!t->flight() && !t->holds_unwritten_data()) {
            t->flush_claim.store(false, std::memory_order_release);
          }
          break;
        }
        if (monotonic_ns() >= deadline) {
          t->flush_claim.store(false, std::memory_order_release);  // left as in any round
          break;
        }
        relax(spins);
      }
    }
  }
  for (ThreadTrace* t = head; t != nullptr; t = t->next) {
    if (!t->flush_claim.load(std::memory_order_relaxed)) continue;
    if (const char* dir = flight_dump_dir(); every_thread && dir != nullptr) {
      t->write_flight_window(dir);  // a flight dump: the window, not a flush
    } else if (!tracing_stopped()) {
      t->flush_idle();
    }
    t->flush_claim.store(false, std::memory_order_release);
  }
  g_hooks_off.fetch_and(~kFlushRound);
  g_round_on.store(false);
  unlock_thread_registry();
}

// Sleeps `period` (relative, CLOCK_MONOTONIC) unless g_wake_word is no
// longer `seen` or changes meanwhile.
void sleep_unless_woken(std::uint32_t seen, const timespec& period) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&g_wake_word), FUTEX_WAIT_PRIVATE, seen,
          &period, nullptr, 0);
}

void wake_flusher() {
  g_wake_word.fetch_add(1, std::memory_order_acq_rel);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&g_wake_word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
}

bool forced_round_pending() {
  return g_forced_asked.load(std::memory_order_acquire) !=
         g_forced_done.load(std::memory_order_acquire);
}

bool flusher_should_run() {
  return !tracing_stopped() && g_stop_flusher.load(std::memory_order_acquire) == 0;
}

// Advances the clock tick (clock_tick.h) when its time `next_tick` has
// come, and publishes its period `tick_ns` (0: none) for the threads' stall
// detection. Returns the next tick's time. A tick late by more than a period
// (this thread descheduled) is not made up: the next comes a period later.
std::uint64_t advance_clock_tick(std::uint64_t tick_ns, std::uint64_t next_tick,
                                 std::uint64_t now) {
  if (tick_ns == 0) {
    g_clock_tick_ns.store(0, std::memory_order_relaxed);
    return 0;
  }
  if (next_tick == 0) {  // the first tick: the period published from its time on
    g_clock_tick.fetch_add(1, std::memory_order_release);
    g_clock_tick_ns.store(tick_ns, std::memory_order_relaxed);
    return now + tick_ns;
  }
  if (now < next_tick) return next_tick;
  g_clock_tick.fetch_add(1, std::memory_order_release);
  // How late this tick is: events that saw the previous one may have
  // happened up to a period plus this after the last clock read.
  if (const std::uint64_t late = now - next_tick;
      late > g_clock_tick_late_max_ns.load(std::memory_order_relaxed)) {
    g_clock_tick_late_max_ns.store(late, std::memory_order_relaxed);
  }
  next_tick += tick_ns;
  return next_tick <= now ? now + tick_ns : next_tick;
}

void* flusher_main(void*) {
  ignore_hooks_on_this_thread_for_good();
  g_flusher_tid.store(static_cast<pid_t>(syscall(SYS_gettid)), std::memory_order_release);
  // The tick's wake-ups on time: 1 us of timer slack, not the default 50.
  prctl(PR_SET_TIMERSLACK, 1000ul, 0ul, 0ul, 0ul);

  std::uint64_t next_round = monotonic_ns() + g_period_ns.load(std::memory_order_relaxed);
  std::uint64_t next_tick = 0;
  while (flusher_should_run()) {
    // No tick while tracing is switched off (no event to time): the
    // process then pays for no wake-ups but the rounds'.
    const std::uint64_t tick_ns =
        tracing_switched_off() ? 0 : g_clock_tick_period_ns.load(std::memory_order_acquire);
    std::uint64_t now = monotonic_ns();
    next_tick = advance_clock_tick(tick_ns, next_tick, now);
    const std::uint64_t wake = next_tick != 0 && next_tick < next_round ? next_tick : next_round;
    const std::uint64_t ns = wake > now ? wake - now : 0;
    const timespec period{static_cast<time_t>(ns / 1000000000u),
                          static_cast<long>(ns % 1000000000u)};
    const std::uint32_t seen = g_wake_word.load(std::memory_order_acquire);
    if (ns != 0 && !forced_round_pending() && flusher_should_run()) {
      sleep_unless_woken(seen, period);
    }
    if (!flusher_should_run()) break;
    apply_requested_tracing_switch();  // the toggle signal's sleds (woken for it)
    now = monotonic_ns();
    next_tick = advance_clock_tick(tick_ns, next_tick, now);
    const std::uint32_t asked = g_forced_asked.load(std::memory_order_acquire);
    const bool forced = asked != g_forced_done.load(std::memory_order_acquire);
    if (!forced && now < next_round) continue;  // a tick, or woken for a new tick period
    flush_round(forced);
    g_forced_done.store(asked, std::memory_order_release);
    patch_library_calls_of_new_objects();
    patch_sleds_of_new_objects();
    next_round = monotonic_ns() + g_period_ns.load(std::memory_order_relaxed);
  }
  g_clock_tick_ns.store(0, std::memory_order_relaxed);  // no tick from here on
  return nullptr;
}

// Starts the flusher thread with the period in g_period_ns, unless this
// process has one.
bool launch_flusher() {
  const pid_t self = getpid();
  pid_t running = g_flusher_pid.load();
  if (running == self || !g_flusher_pid.compare_exchange_strong(running, self)) return true;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  // The new thread inherits this mask: no signal meant for the program is
  // ever delivered to it.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  pthread_t thread;
  // Past the pthread_create interposer: the flusher takes no thread index.
  const bool ok = create_runtime_thread(&thread, &attr, flusher_main, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  pthread_attr_destroy(&attr);
  if (ok) {
    pthread_setname_np(thread, "parlot-flush");
  } else {
    g_flusher_pid.store(0);  // none runs: pause_idle_flusher() has none to wait for
  }
  return ok;
}

}  // namespace

bool start_idle_flusher(std::uint64_t flush_ms) {
  if (flush_ms == 0) return true;
  std::uint64_t ns = flush_ms * 1000000u / 2;
  if (ns < 1000000u) ns = 1000000u;
  g_period_ns.store(ns, std::memory_order_relaxed);
  wake_flusher();  // one started before main takes the clock tick's period now
  // While the flusher is not yet a second thread sharing the descriptor
  // table, growing it is cheap; after, the first open_own() would wait for
  // an RCU grace period (13 ms of every traced process's start here).
  grow_descriptor_table();
  return launch_flusher();
}

void enable_idle_flush_rounds() {
  g_rounds_enabled.store(true, std::memory_order_release);
}

namespace {

// Before main, where a process has instrumented code: started here, the
// flusher thread is never created from inside a hook (pthread_create
// allocates, and the first hook may run inside the program's own malloc).
// PARLOT_FLUSH_MS as config.cpp reads it: digits, else the default.
// Not in sanitizer builds: ThreadSanitizer cannot start threads in the child
// of a process that forked with more than one thread, which a flusher
// started before main would make of every fork.
[[gnu::constructor(103)]] void start_idle_flusher_before_main() {
#ifndef PARLOT_SANITIZED_BUILD
  std::uint64_t flush_ms = 1000;
  if (const char* v = std::getenv("PARLOT_FLUSH_MS"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (*end == '\0' && v[0] >= '0' && v[0] <= '9') flush_ms = n;
  }
  if (flush_ms == 0 || !instrumented_object_loaded()) return;
  // While the process has one thread the registration is cheap; after the
  // flusher starts, the first event's would wait 8-12 ms (register_membarrier).
  register_membarrier();
  IgnoreHooksOnThisThread quiet;  // pthread_create may call an instrumented malloc
  start_idle_flusher(flush_ms);
#endif
}

}  // namespace

void idle_flusher_after_fork_in_child() {
  g_clock_tick_ns.store(0);  // no tick until the child's flusher runs
  g_flusher_pid.store(0);
  g_flusher_tid.store(0);
  g_stop_flusher.store(0);
  g_forced_done.store(g_forced_asked.load());
  g_round_on.store(false);
  g_hooks_off.fetch_and(~kFlushRound);
}

bool wait_for_idle_flush_round(std::uint64_t timeout_ns) {
  const std::uint64_t start = monotonic_ns();
  for (unsigned spins = 0; g_round_on.load(); ++spins) {
    if (monotonic_ns() - start >= timeout_ns) return false;
    relax(spins);
  }
  return true;
}

bool flush_all_threads_now(std::uint64_t timeout_ns) {
  if (g_flusher_pid.load() != getpid() || !g_rounds_enabled.load(std::memory_order_acquire) ||
      g_stop_flusher.load(std::memory_order_acquire) != 0) {
    return false;
  }
  const std::uint32_t ticket = g_forced_asked.fetch_add(1, std::memory_order_acq_rel) + 1;
  wake_flusher();
  const std::uint64_t start = monotonic_ns();
  // Served once g_forced_done has reached the ticket (modulo 2^32).
  while (static_cast<std::int32_t>(g_forced_done.load(std::memory_order_acquire) - ticket) < 0) {
    if (monotonic_ns() - start >= timeout_ns) return false;
    const timespec pause{0, 200 * 1000};
    nanosleep(&pause, nullptr);
  }
  return true;
}

void wake_idle_flusher() {
  wake_flusher();
}

bool pause_idle_flusher() {
  const pid_t self = getpid();
  if (g_flusher_pid.load() != self) return false;
  g_clock_tick_ns.store(0);  // the tick stops: no stall detection meanwhile
  g_stop_flusher.store(1, std::memory_order_release);
  wake_flusher();
  // The thread publishes its id first thing; then it is gone once the
  // kernel no longer finds it in this thread group (tgkill: ESRCH), which
  // is when unshare() and setns() stop counting it. Bounded: 2 s.
  const std::uint64_t start = monotonic_ns();
  constexpr std::uint64_t kLimitNs = 2000000000u;
  pid_t tid = 0;
  for (unsigned spins = 0; (tid = g_flusher_tid.load(std::memory_order_acquire)) == 0; ++spins) {
    if (monotonic_ns() - start >= kLimitNs) break;
    relax(spins);
  }
  if (tid != 0) {
    for (unsigned spins = 0; syscall(SYS_tgkill, self, tid, 0) == 0 || errno != ESRCH; ++spins) {
      if (monotonic_ns() - start >= kLimitNs) break;
      relax(spins);
    }
  }
  g_flusher_tid.store(0);
  g_flusher_pid.store(0);
  return true;
}

void resume_idle_flusher() {
  g_stop_flusher.store(0, std::memory_order_release);
  if (tracing_stopped()) return;
  IgnoreHooksOnThisThread quiet;  // pthread_create may call an instrumented malloc
  launch_flusher();
}

bool hook_may_record_after_flush_round(ThreadTrace* t) {
  bool parked = false;
  for (unsigned spins = 0;; ++spins) {
    if ((g_hooks_off.load(std::memory_order_acquire) & ~kFlushRound) != 0) break;
    if (!t->flush_claim.load(std::memory_order_acquire)) break;
    if (!parked) {
      t->parked_for_flusher.store(true, std::memory_order_seq_cst);
      parked = true;
    }
    relax(spins);
  }
  if (parked) t->parked_for_flusher.store(false, std::memory_order_release);
  return (g_hooks_off.load(std::memory_order_acquire) & ~kFlushRound) == 0;
}

void wait_while_flusher_holds(ThreadTrace* t) {
  if ((g_hooks_off.load() & kFlushRound) == 0) return;
  if (!t->flush_claim.load(std::memory_order_acquire)) return;
  t->parked_for_flusher.store(true, std::memory_order_seq_cst);
  for (unsigned spins = 0; t->flush_claim.load(std::memory_order_acquire); ++spins) relax(spins);
  t->parked_for_flusher.store(false, std::memory_order_release);
}

}  // namespace parlot::runtime
