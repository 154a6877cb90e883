// What the hooks read on every event besides the thread's busy word and
// g_hooks_off (hook_state.h): the process's function IDs and the calling
// thread's trace. Both are defined by the process (process/), which
// creates the traces (hook_slow_paths.h: attach_current_thread()).
#pragma once

#include "hot_path/function_ids.h"
#include "hot_path/thread_trace.h"

namespace parlot::runtime {

/// The process's function IDs (paper §3.1).
extern FunctionIds g_function_ids;

/// The calling thread's trace; nullptr until its first event, and after the
/// thread's trace ended. initial-exec TLS: one load from %fs.
extern constinit thread_local ThreadTrace* tls_thread_trace
    __attribute__((tls_model("initial-exec")));

}  // namespace parlot::runtime
