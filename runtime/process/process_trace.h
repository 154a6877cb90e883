// What the interposers ask of the process's trace beyond the small headers
// (finish.h, thread_registry.h, hot_path/trace_owner.h, ...): the trace
// handed to the user a process drops root for, a thread whose stack is cut.
// The process's trace itself is made of the files of process/ that share
// process_state.h: the trace directory, the process files, the start, the
// thread registry, fork, failure reports and finish. Nothing below
// process/ includes this header.
#pragma once

#include <pthread.h>
#include <sys/types.h>

namespace parlot::runtime {

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
