// The registry of live thread traces: a thread's trace created and linked
// at its first event, finished and unlinked when the thread exits; the
// guard that keeps the runtime's own work out of the trace.
#include "process/thread_registry.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "hot_path/current_trace.h"
#include "hot_path/hook_slow_paths.h"
#include "hot_path/trace_writes.h"
#include "ignore_hooks.h"
#include "io/raw_io.h"
#include "parlot/format.h"
#include "process/failure_reports.h"
#include "process/idle_flusher.h"
#include "process/process_state.h"
#include "process/process_trace.h"
#include "process/thread_index.h"

namespace parlot::runtime {

namespace {

void unlink_trace(ThreadTrace* t) {
  if (t->prev != nullptr) t->prev->next = t->next;
  if (t->next != nullptr) t->next->prev = t->prev;
  if (g_registry == t) g_registry = t->next;
  t->prev = t->next = nullptr;
}

}  // namespace

void link_trace(ThreadTrace* t) {
  t->prev = nullptr;
  t->next = g_registry;
  if (g_registry != nullptr) g_registry->prev = t;
  g_registry = t;
}

void on_thread_exit(void* p) {
  auto* t = static_cast<ThreadTrace*>(p);
  tls_thread_trace = nullptr;
  tls_state = ThreadState::kEnded;
  pthread_mutex_lock(&g_registry_lock);
  if (t->flight()) {
    // Its window is closed and stays, for the dumps to come: the trace is
    // kept in the registry until the process ends.
    t->finish();
    pthread_mutex_unlock(&g_registry_lock);
    return;
  }
  if (!t->finished() && t->finish() != 0) report_thread_failure(*t);
  unlink_trace(t);
  pthread_mutex_unlock(&g_registry_lock);
  ThreadTrace::destroy(t);
}

// A new trace for the calling thread, linked into the registry (its lock
// held). Returns nullptr, said on stderr, when it cannot be had: this
// thread goes untraced, the others go on.
ThreadTrace* create_thread_trace() {
  ThreadTrace* t = nullptr;
  int err = 0;
  const auto codec = !g_config.compress    ? format::Codec::kRawWords
                     : g_config.codec == 1 ? format::Codec::kLzZe
                                           : format::Codec::kLzRank;
  g_threads_started.fetch_add(1);
  t = ThreadTrace::create(g_process_dir, current_thread_index(), codec, g_config.buffer_bytes,
                          g_config.stack_frames, std::uint64_t{g_config.flush_ms} * 1000000u,
                          g_config.discard, static_cast<std::uint32_t>(g_config.clock_events),
                          g_config.flight_bytes, err);
  if (t != nullptr) {
    t->set_record_depth(g_config.record_depth);
    t->set_call_sites(g_config.call_sites);
    t->set_clock_tolerance_ns(g_config.clock_events == 1 ? 0 : g_config.clock_tolerance_ns);
    link_trace(t);
  } else if (is_process_wide_write_error(err)) {
    report_write_failure(err);  // said once for the process
  } else {
    char buf[1400];
    TextBuilder msg(buf, sizeof buf);
    msg.str("cannot create the trace of thread ")
        .u64(static_cast<std::uint64_t>(syscall(SYS_gettid)))
        .str(" in '")
        .str(g_process_dir)
        .str("': ")
        .str(strerrordesc_np(err))
        .str("; this thread is not traced, the others go on");
    log_line(msg.c_str());
  }
  return t;
}

ThreadTrace* lock_thread_registry() {
  pthread_mutex_lock(&g_registry_lock);
  return g_registry;
}

void unlock_thread_registry() {
  pthread_mutex_unlock(&g_registry_lock);
}

void ignore_hooks_on_this_thread_for_good() {
  tls_state = ThreadState::kEnded;
}

IgnoreHooksOnThisThread::IgnoreHooksOnThisThread() {
  if (ThreadTrace* t = tls_thread_trace) {
    saved_ = t->busy.exchange(ThreadTrace::kInHook);  // a busy thread's hooks drop their events
    if ((saved_ & ThreadTrace::kInHook) == 0) wait_while_flusher_holds(t);
  } else {
    saved_ = static_cast<int>(tls_state);
    tls_state = ThreadState::kAttaching;  // an attaching thread's hooks record nothing
  }
}

IgnoreHooksOnThisThread::~IgnoreHooksOnThisThread() {
  if (ThreadTrace* t = tls_thread_trace) {
    t->busy.store(saved_);
    if ((saved_ & ThreadTrace::kInHook) == 0 && t->deferred_signals.load() != 0) {
      raise_deferred_signals(t);
    }
  } else {
    tls_state = static_cast<ThreadState>(saved_);
  }
}

void mark_stack_cut_of(pthread_t thread) {
  pthread_mutex_lock(&g_registry_lock);
  for (ThreadTrace* t = g_registry; t != nullptr; t = t->next) {
    if (pthread_equal(t->thread, thread)) {
      t->cancel_requested.store(true, std::memory_order_relaxed);
      t->resync_pending.store(true, std::memory_order_relaxed);
    }
  }
  pthread_mutex_unlock(&g_registry_lock);
}

bool current_thread_in_hook() {
  const ThreadTrace* t = tls_thread_trace;
  return t != nullptr && (t->busy.load(std::memory_order_relaxed) & ThreadTrace::kInHook) != 0;
}

}  // namespace parlot::runtime
