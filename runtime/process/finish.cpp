// The end of the process's trace (finish.h): every thread's pending data,
// the function table, the load map and the final metadata written, from
// the runtime's ELF destructor, exit paths and signal handlers.
#include "process/finish.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <ctime>

#include "current_tid.h"
#include "hot_path/current_trace.h"
#include "hot_path/hook_state.h"
#include "hot_path/trace_owner.h"
#include "hot_path/trace_writes.h"
#include "io/own_fd.h"
#include "io/raw_io.h"
#include "process/failure_reports.h"
#include "process/flight_dump.h"
#include "process/idle_flusher.h"
#include "process/process_state.h"
#include "process/thread_fence.h"
#include "process/thread_registry.h"
#include "time/monotonic_clock.h"

namespace parlot::runtime {

namespace {

std::atomic<bool> g_finished{false};
std::atomic<bool> g_finish_done{false};
std::atomic<long> g_finishing_tid{0};

// How long the finishing thread waits for threads still inside a hook, in
// all (ns): a thread that has not left by then and is not waiting for a CPU
// is frozen (stopped by a debugger, stuck in I/O) and its file stays at its
// last complete block. A thread that is runnable (preempted on a loaded
// machine) is waited for longer.
constexpr std::uint64_t kBusyWaitNs = 100ull * 1000 * 1000;
constexpr std::uint64_t kRunnableWaitNs = 3ull * 1000 * 1000 * 1000;

// True when thread `tid` of this process is running or waiting for a CPU
// (state R in /proc/self/task/<tid>/stat). Async-signal-safe.
bool thread_runnable(std::uint64_t tid) {
  char path[64];
  TextBuilder p(path, sizeof path);
  p.str("/proc/self/task/").u64(tid).str("/stat");
  const int fd = open_own(p.c_str(), O_RDONLY);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  // "pid (comm) S ...": the state follows the last ')'.
  for (ssize_t i = n - 1; i > 0; --i) {
    if (buf[i] == ')') return i + 2 < n && buf[i + 2] == 'R';
  }
  return false;
}

// Waits for thread trace `t` to leave its hook: 100 ms in all, up to 3 s
// while it is runnable. Returns true when it left.
bool wait_out_of_hook(const ThreadTrace* t, std::uint64_t start_ns) {
  for (int spins = 0; (t->busy.load(std::memory_order_acquire) & ThreadTrace::kInHook) != 0;
       ++spins) {
    const std::uint64_t waited = monotonic_ns() - start_ns;
    if (waited >= kBusyWaitNs &&
        (waited >= kRunnableWaitNs || (spins % 64 == 0 && !thread_runnable(t->tid())))) {
      return (t->busy.load(std::memory_order_acquire) & ThreadTrace::kInHook) == 0;
    }
    if (spins < 1000) {
      sched_yield();
    } else {
      const timespec pause{0, 100 * 1000};
      nanosleep(&pause, nullptr);
    }
  }
  return true;
}
// How long another thread that wants the process to end (a termination
// signal's handler, _exit, exec) waits for a finish in progress (ns).
constexpr std::uint64_t kFinishWaitNs = 10ull * 1000 * 1000 * 1000;

// Every signal but the synchronous ones (a fault of the finishing thread
// must still reach the crash handler); SIGKILL and SIGSTOP stay unblockable.
void block_asynchronous_signals(sigset_t& saved) {
  sigset_t set;
  sigfillset(&set);
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigdelset(&set, sig);
  pthread_sigmask(SIG_BLOCK, &set, &saved);
}

}  // namespace

void wait_for_finish_in_progress() {
  if (!g_finished.load() || g_finish_done.load() || g_finishing_tid.load() == current_tid()) {
    return;
  }
  const std::uint64_t deadline = monotonic_ns() + kFinishWaitNs;
  while (!g_finish_done.load() && monotonic_ns() < deadline) {
    const timespec pause{0, 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
}

void finish_process(FinishReason reason) {
  if (g_state.load() != ProcessState::kReady || !is_traced_process()) return;
  if (g_finished.exchange(true)) {
    // Another thread is finishing: the process must not end under it.
    wait_for_finish_in_progress();
    return;
  }
  g_finishing_tid.store(current_tid());
  // A termination signal arriving now waits until the trace is written.
  sigset_t saved_mask;
  block_asynchronous_signals(saved_mask);
  const bool in_signal = reason == FinishReason::kSignal;
  const bool write = !g_fork_child_pending.load() && !g_failure_reported.load();
  stop_tracing();
  fence_all_threads();
  // The idle flusher stops at its next thread; a round stuck in a write
  // leaves the threads it holds as they are.
  const bool flusher_idle = wait_for_idle_flush_round(kBusyWaitNs);
  // In a signal handler the interrupted code may hold the registry lock:
  // try for a while, then go on without it (the process is about to die).
  bool locked = false;
  for (int spins = 0; !locked; ++spins) {
    locked = pthread_mutex_trylock(&g_registry_lock) == 0;
    if (locked || (in_signal && spins > 20000)) break;
    if (!in_signal) {
      pthread_mutex_lock(&g_registry_lock);
      locked = true;
      break;
    }
    sched_yield();
  }
  ThreadTrace* self = tls_thread_trace;
  const bool self_in_hook = current_thread_in_hook();
  const std::uint64_t wait_start = monotonic_ns();
  int left_cut = 0;
  // The flight recorder's last dump: every window, written by finish().
  const bool flight = write && flight_mode() && begin_flight_dump() == 0;
  for (ThreadTrace* t = g_registry; t != nullptr; t = t->next) {
    // Another thread may be inside a hook: let it leave (bounded wait). One
    // still inside (frozen, or a fault in the tracer itself) has
    // half-updated state: its file stays at its last complete block, which
    // the reader reports as cut short. Never finished here.
    const bool held = !flusher_idle && t->flush_claim.load();
    if (held || (t == self && self_in_hook) || (t != self && !wait_out_of_hook(t, wait_start))) {
      if (!t->finished()) ++left_cut;
      continue;
    }
    // One thread's failure does not stop the others.
    if ((!t->finished() || t->flight()) && write && t->finish() != 0) report_thread_failure(*t);
  }
  if (left_cut != 0 && write) {
    char buf[200];
    TextBuilder msg(buf, sizeof buf);
    msg.u64(static_cast<std::uint64_t>(left_cut))
        .str(
            " thread(s) still inside the tracer at the end: their files end at their last "
            "complete block (cut short)");
    log_line(msg.c_str());
  }
  if (write && !g_failure_reported.load()) {
    // Wait for a flush in progress on another thread (bounded).
    for (int spins = 0; g_metadata_lock.test_and_set(std::memory_order_acquire); ++spins) {
      if (spins > 100000) break;
      sched_yield();
    }
    int err = append_function_table();
    if (err == 0) err = append_load_map();
    if (err == 0) err = seal_function_table();
    // The objects loaded since the start (dlopen) that hold no traced
    // function. dl_iterate_phdr takes the loader's lock: not from a signal
    // handler.
    if (err == 0 && !in_signal) {
      g_objects.note_loaded_objects();
      err = append_load_map();
    }
    if (err == 0) err = write_process_metadata(realtime_ns());
    if (err != 0) report_write_failure(err);
  }
  if (flight) {
    end_flight_dump();
    remove_live_flight_dir();
  }
  if (locked) pthread_mutex_unlock(&g_registry_lock);
  g_finish_done.store(true);
  pthread_sigmask(SIG_SETMASK, &saved_mask, nullptr);
}

}  // namespace parlot::runtime

namespace {

// Initialisation is lazy (the first event creates the process directory),
// so a process that loads the runtime but runs no instrumented code (a shell,
// `timeout`, any uninstrumented tool under LD_PRELOAD) leaves nothing behind.
// The trace ends after the program's atexit handlers and static destructors.
[[gnu::destructor(101)]] void parlot_runtime_finish() {
  parlot::runtime::finish_process();
}

}  // namespace
