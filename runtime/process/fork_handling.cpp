// Fork: the atfork handlers that hand the forking thread's trace to the
// child, the child's first event (its own directory), and which process
// owns the trace state in this memory (fork, vfork, a raw clone).
#include "hot_path/trace_owner.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hot_path/current_trace.h"
#include "hot_path/hook_state.h"
#include "process/failure_reports.h"
#include "process/idle_flusher.h"
#include "process/process_state.h"
#include "process/thread_index.h"

namespace parlot::runtime {

namespace {

// A word in a page the kernel hands a child that does not share this
// process's memory zeroed (MADV_WIPEONFORK): 1 in a process the runtime set
// up (a fork child sets it again) and in a vfork child, which shares its
// parent's memory; 0 in a raw clone without CLONE_VM. nullptr where the
// kernel has no MADV_WIPEONFORK (before 4.14).
volatile std::uint32_t* g_own_memory = nullptr;

}  // namespace

void before_fork() {
  pthread_mutex_lock(&g_registry_lock);
  g_fork_ns = realtime_ns();
}

void after_fork_in_parent() {
  pthread_mutex_unlock(&g_registry_lock);
}

// Only the forking thread lives on in the child. Other threads' traces are
// dropped (their data belongs to the parent's files); the forking thread's
// trace is parked until the child's next event starts its own directory.
void after_fork_in_child() {
  pthread_mutex_init(&g_registry_lock, nullptr);
  if (g_own_memory != nullptr) *g_own_memory = 1;  // wiped by the fork: this process is known
  if (g_state.load() != ProcessState::kReady || tracing_stopped()) return;
  ThreadTrace* self = tls_thread_trace;
  for (ThreadTrace* t = g_registry; t != nullptr;) {
    ThreadTrace* next = t->next;
    if (t != self) ThreadTrace::destroy(t);
    t = next;
  }
  g_registry = nullptr;
  g_process_dir[0] = '\0';  // the child makes its own; no descriptor to close
  g_metadata_lock.clear();
  g_threads_started.store(0);
  g_fork_child_pending.store(true);
  idle_flusher_after_fork_in_child();
  if (self != nullptr) {
    self->abandon_file();
    tls_forked_trace = self;
    tls_thread_trace = nullptr;
    tls_state = ThreadState::kNone;
  }
}

// Maps the page of g_own_memory and sets its word.
void mark_own_memory() {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  if (madvise(p, page, MADV_WIPEONFORK) != 0) {
    munmap(p, page);
    return;
  }
  g_own_memory = static_cast<volatile std::uint32_t*>(p);
  *g_own_memory = 1;
}

// First event of a fork child: its own directory, then the parked trace.
ThreadTrace* resume_in_fork_child() {
  pthread_mutex_lock(&g_registry_lock);
  ThreadTrace* t = nullptr;
  if (g_fork_child_pending.load()) {
    if (!start_process_directory()) {
      stop_tracing();
    } else {
      g_fork_child_pending.store(false);
      if (g_membarrier_ready) start_idle_flusher(g_config.flush_ms);
    }
  }
  if (!tracing_stopped() && tls_forked_trace == nullptr) {
    // A thread that made no event before the fork (or one the child
    // started): a trace of its own, as in any process.
    t = create_thread_trace();
  } else if (!tracing_stopped()) {
    t = tls_forked_trace;
    g_threads_started.fetch_add(1);
    const int err = t->restart_in_child(g_process_dir, current_thread_index(), g_function_ids);
    if (err != 0 && is_process_wide_write_error(err)) {
      report_write_failure(err);
      ThreadTrace::destroy(t);
      t = nullptr;
    } else if (err != 0) {
      log_error("cannot create a thread trace in", g_process_dir, err);
      ThreadTrace::destroy(t);
      t = nullptr;
    } else {
      link_trace(t);
    }
  }
  tls_forked_trace = nullptr;
  pthread_mutex_unlock(&g_registry_lock);
  return t;
}

bool is_traced_process() {
  return g_traced_pid.load() == getpid();
}

bool is_untraced_copy(std::uint64_t owner_pid) {
  if (static_cast<std::uint64_t>(getpid()) == owner_pid) return false;
  // A vfork child runs in its (suspended) parent's memory: it records as
  // its parent, as before the exec it is about to make.
  if (g_own_memory != nullptr && *g_own_memory == 1) return false;
  stop_tracing();  // in this copy of the memory only
  return true;
}

}  // namespace parlot::runtime
