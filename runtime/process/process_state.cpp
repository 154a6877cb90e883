// The process-wide state of the trace (process_state.h), defined in one
// place, and the helpers every part of it uses.
#include "process/process_state.h"

#include <cstring>
#include <ctime>

#include "hot_path/current_trace.h"
#include "io/raw_io.h"

namespace parlot::runtime {

FunctionIds g_function_ids;
constinit thread_local ThreadTrace* tls_thread_trace __attribute__((tls_model("initial-exec"))) =
    nullptr;

std::atomic<ProcessState> g_state{ProcessState::kUninitialised};
Config g_config;
char g_trace_dir[1024] = "";    // PARLOT_DIR made absolute at initialisation
char g_process_dir[1200] = "";  // this process's directory (absolute); "" = none
std::uint64_t g_start_ns = 0;
// When the parent forked (CLOCK_REALTIME ns): the child's start time, so
// that children forked one after another are ordered as forked, whichever
// makes its first event first.
std::uint64_t g_fork_ns = 0;
std::atomic<pid_t> g_traced_pid{0};
std::atomic<std::uint64_t> g_threads_started{0};  // thread traces started (indices: thread_index.h)
std::atomic<bool> g_fork_child_pending{false};
std::atomic<bool> g_failure_reported{false};
bool g_membarrier_ready = false;
ObjectTable g_objects;
std::atomic_flag g_metadata_lock = ATOMIC_FLAG_INIT;
pthread_mutex_t g_registry_lock = PTHREAD_MUTEX_INITIALIZER;
ThreadTrace* g_registry = nullptr;  // live thread traces, under g_registry_lock

constinit thread_local ThreadState tls_state __attribute__((tls_model("initial-exec"))) =
    ThreadState::kNone;
// In a fork child: the forking thread's trace, waiting for the child's next event.
constinit thread_local ThreadTrace* tls_forked_trace __attribute__((tls_model("initial-exec"))) =
    nullptr;

void log_error(const char* what, const char* path, int error) {
  char buf[1400];
  TextBuilder msg(buf, sizeof buf);
  msg.str(what);
  if (path != nullptr) msg.str(" '").str(path).ch('\'');
  msg.str(": ").str(strerrordesc_np(error)).str("; tracing is off, the program runs on");
  log_line(msg.c_str());
}

}  // namespace parlot::runtime
