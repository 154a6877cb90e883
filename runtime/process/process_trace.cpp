// The process's first event and a thread's: the runtime's initialisation
// (settings, the function table, the process directory, the thread, fork
// and signal handlers, the idle flusher) and attach_current_thread(), the
// hooks' slow path to a thread's trace.

#include <pthread.h>
#include <sched.h>

#include <cerrno>

#include "hot_path/current_trace.h"
#include "hot_path/hook_slow_paths.h"
#include "hot_path/hook_state.h"
#include "hot_path/trace_owner.h"
#include "io/node_file.h"
#include "io/raw_io.h"
#include "libcalls/libcall_patcher.h"
#include "libcalls/libcall_stubs.h"
#include "process/function_filter.h"
#include "process/idle_flusher.h"
#include "process/process_state.h"
#include "process/signal_handlers.h"
#include "process/thread_fence.h"
#include "time/clock_tick.h"

namespace parlot::runtime {

namespace {

FunctionFilter g_function_filter;  // PARLOT_INCLUDE, PARLOT_EXCLUDE
pthread_key_t g_thread_key;

void on_new_function(std::uintptr_t address) {
  g_objects.note_code_address(address);
}

void initialise_process() {
  g_config = read_config();
  mark_own_memory();
  // Before any thread's trace exists (each maps its library-call shadow at
  // creation), whatever the order of constructors.
  patch_library_calls_at_first_event();
  if (const int err = resolve_trace_dir(); err != 0) {
    log_error("cannot resolve the trace directory", g_config.dir, err);
    stop_tracing();
    g_state.store(ProcessState::kOff);
    return;
  }
  bool ok = g_function_ids.init(g_config.max_functions) && g_objects.init(4096);
  if (!ok) log_error("cannot map the function table", nullptr, ENOMEM);
  g_function_ids.on_new_function = on_new_function;
  g_function_filter.names_stub = libcall_stub_names;
  if (g_function_filter.init(g_config.include, g_config.exclude) && g_function_filter.active()) {
    g_function_ids.records = [](std::uintptr_t a) { return g_function_filter.records(a); };
  }
  // The flusher ticks; the process file (written next) records the period.
  set_clock_tick_period(g_config.clock_tick_us, g_config.clock_events);
  ok = ok && start_process_directory();
  if (ok) {
    ok = pthread_key_create(&g_thread_key, on_thread_exit) == 0 &&
         pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child) == 0;
    if (!ok) log_error("cannot register thread and fork handlers", nullptr, EAGAIN);
  }
  g_membarrier_ready = ok && register_membarrier();
  if (ok) install_signal_handlers(g_config.flight_signal, g_config.toggle_signal);
  // The flusher's handshake needs an exact fence (membarrier): where the
  // kernel has none, fence_all_threads() only sleeps, which is enough at
  // process end but not for writing a live thread's data.
  if (ok && g_membarrier_ready && g_config.flush_ms != 0) enable_idle_flush_rounds();
  if (ok && g_membarrier_ready && !start_idle_flusher(g_config.flush_ms)) {
    log_line("cannot start the idle flusher thread: SIGKILL may lose an idle thread's last events");
  }
  if (!ok) stop_tracing();
  g_state.store(ok ? ProcessState::kReady : ProcessState::kOff);
}

}  // namespace

// Opens this process's directory and writes its first files.
bool start_process_directory() {
  int err = make_dirs(g_trace_dir);
  if (err != 0) {
    log_error("cannot create trace directory", g_trace_dir, err);
    return false;
  }
  err = make_staging_process_dir();
  if (err != 0) {
    log_error("cannot create a process directory in", g_trace_dir, err);
    return false;
  }
  g_start_ns = g_fork_child_pending.load() && g_fork_ns != 0 ? g_fork_ns : realtime_ns();
  g_traced_pid.store(getpid());
  // Every object loaded now, in the loader's order, so that processes of
  // one program number their objects alike (a fork child writes every
  // object known so far into its own map, renumbered from 0 in the same
  // order).
  g_objects.note_loaded_objects();
  node_set_process_start(g_start_ns);
  g_objects.mark_none_written();
  err = write_process_metadata(0);
  if (err == 0) err = create_load_map();
  if (err == 0) err = create_function_table();
  if (err != 0) {
    log_error("cannot write the process metadata in", g_process_dir, err);
    remove_staging_process_dir();
    return false;
  }
  // Only now does the directory appear under its name, with its first
  // files whole: a SIGKILL before this leaves no process directory. The
  // flight recorder keeps it under its staging name, which no reader
  // takes: its trace is the dumps (flight_dump.h).
  err = g_config.flight_bytes != 0 ? 0 : publish_process_dir();
  if (err != 0) {
    log_error("cannot name the process directory", g_process_dir, err);
    remove_staging_process_dir();
    return false;
  }
  write_libcall_record();
  return true;
}

ThreadTrace* attach_current_thread() {
  // A hook re-entered on this thread while it attaches (a signal handler)
  // drops its event.
  if (tls_state == ThreadState::kAttaching) return nullptr;
  ProcessState s = g_state.load(std::memory_order_acquire);
  if (s != ProcessState::kReady) {
    if (s == ProcessState::kOff) return nullptr;
    if (s == ProcessState::kUninitialised &&
        g_state.compare_exchange_strong(s, ProcessState::kInitialising)) {
      tls_state = ThreadState::kAttaching;
      initialise_process();
      tls_state = ThreadState::kNone;
    } else {
      // Another thread is initialising the process (a few system calls):
      // wait for it rather than lose this thread's first events.
      while (g_state.load(std::memory_order_acquire) == ProcessState::kInitialising) {
        sched_yield();
      }
      if (g_state.load(std::memory_order_acquire) != ProcessState::kReady) return nullptr;
    }
  }
  if (hooks_off_for_process() || tls_state != ThreadState::kNone)
    return nullptr;  // stopped, paused
  // A process that a raw clone started (no atfork handler ran) must not
  // add a thread file to its parent's directory.
  if (!g_fork_child_pending.load() && is_untraced_copy(g_traced_pid.load())) return nullptr;
  tls_state = ThreadState::kAttaching;  // a hook re-entered from here drops its event
  ThreadTrace* t = nullptr;
  if (g_fork_child_pending.load() || tls_forked_trace != nullptr) {
    t = resume_in_fork_child();
  } else {
    pthread_mutex_lock(&g_registry_lock);
    t = create_thread_trace();
    pthread_mutex_unlock(&g_registry_lock);
  }
  if (t == nullptr) {
    tls_state = ThreadState::kEnded;
    return nullptr;
  }
  if (tls_hook_state.pause_depth > 0) t->busy.store(ThreadTrace::kPaused);
  pthread_setspecific(g_thread_key, t);
  tls_state = ThreadState::kAttached;
  tls_thread_trace = t;
  return t;
}

}  // namespace parlot::runtime
