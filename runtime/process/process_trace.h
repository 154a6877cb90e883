// What the interposers ask of the process's trace beyond the small headers
// (finish.h, thread_registry.h, hot_path/trace_owner.h, ...): the trace
// handed to the user a process drops root for, a thread whose stack is cut.
// Also, until the hub's own header takes them, the process-wide write
// failures. The hub itself (process_trace.cpp) holds the process-wide
// state: settings, the trace directory of this process, the function-ID
// table, the registry of live thread traces, and the transitions: first
// event (initialisation), thread start and end, fork, process end.
// Nothing below process/ includes this header.
#pragma once

#include <pthread.h>
#include <sys/types.h>

namespace parlot::runtime {

/// Called when a write of the trace failed with errno `error` in a way no
/// thread can get past: stops tracing for the whole process and, the first
/// time only, appends `write_error <error>` to the process's `process` file
/// (docs/FORMAT.md; best effort) and prints one line on stderr naming the
/// error, the directory, when tracing stopped (seconds after the start) and
/// about how many events were written. The program goes on unharmed; the
/// thread files end at their last complete block. Async-signal-safe.
void report_write_failure(int error);

/// True for the write errors (`error`: an errno) that concern the whole
/// process rather than one file: the directory gone or closed to the
/// process (ENOENT, ENOTDIR, EROFS, EACCES) or the file system full
/// (ENOSPC, EDQUOT).
bool is_process_wide_write_error(int error);

/// Marks the trace of thread `thread` for a resync with its real stack at
/// its next entry hook, and as cancelled (ThreadTrace::cancel_requested):
/// pthread_cancel, the thread's stack will be cut.
void mark_stack_cut_of(pthread_t thread);

/// Makes user `uid` (group `gid`) the owner of this process's trace
/// directory, its files, and the trace directories this process created
/// (mkdir -p of PARLOT_DIR), so that the runtime can still open and create
/// them once the process has dropped root for that user. Called by the
/// set*uid interposers; errors are ignored (the writes then fail as before
/// and say so). Not from a hook.
void give_trace_to(uid_t uid, gid_t gid);

}  // namespace parlot::runtime
