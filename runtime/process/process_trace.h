// Process-wide state of the runtime: settings, the trace directory of this
// process, the function-ID table, the registry of live thread traces, and
// the transitions: first event (initialisation), thread start and end, fork,
// process end. Everything here is a cold path; the hot path (hooks.cpp) only
// reads `g_hooks_off`, `g_function_ids` and the thread's own trace.
#pragma once

#include <sys/types.h>

#include <pthread.h>
#include "hot_path/hook_state.h"

#include <atomic>
#include <cstddef>

#include "hot_path/function_ids.h"
#include "hot_path/thread_trace.h"

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

/// Why the process trace ends.
enum class FinishReason {
  kExit,    ///< exit(), return from main, _exit(): everything may be used
  kSignal,  ///< a signal handler: no blocking lock, no dynamic-loader call
};

/// Ends the trace of the whole process: stops tracing, writes every
/// thread's pending data and trailer, the function table, the load map and
/// the final metadata. Runs from the runtime's ELF destructor (after the
/// program's atexit handlers), from _exit() and from the signal handlers;
/// idempotent: a second caller waits for the first to be done. Asynchronous
/// signals are blocked on the finishing thread meanwhile. A thread still
/// inside a hook after a short wait (100 ms in all; up to 3 s while it is
/// runnable, i.e. only preempted) is left as it is (its file ends at its
/// last complete block); one thread's write failure does
/// not stop the others. With kSignal locks are only tried.
void finish_process(FinishReason reason = FinishReason::kExit);

/// When another thread is finishing the process trace, waits until it is
/// done (at most 10 s): the process must not end under it. Returns at once
/// otherwise. Async-signal-safe.
void wait_for_finish_in_progress();

/// Marks the trace of thread `thread` for a resync with its real stack at
/// its next entry hook, and as cancelled (ThreadTrace::cancel_requested):
/// pthread_cancel, the thread's stack will be cut.
void mark_stack_cut_of(pthread_t thread);

/// True when the calling thread is inside one of the runtime's hooks.
bool current_thread_in_hook();

/// Makes user `uid` (group `gid`) the owner of this process's trace
/// directory, its files, and the trace directories this process created
/// (mkdir -p of PARLOT_DIR), so that the runtime can still open and create
/// them once the process has dropped root for that user. Called by the
/// set*uid interposers; errors are ignored (the writes then fail as before
/// and say so). Not from a hook.
void give_trace_to(uid_t uid, gid_t gid);

/// Registers the process for membarrier's private expedited fence (what
/// fence_all_threads() uses); true on success. Once registered, a call
/// returns at once. The first call takes about 0.1 ms while the process has
/// one thread, but 8-12 ms with two or more (the kernel waits for an RCU
/// grace period; measured under strace on this project's VM): the runtime
/// registers before it starts its flusher thread.
bool register_membarrier();

/// Makes every thread's earlier stores visible and its later loads see
/// g_hooks_off (the slow half of an asymmetric fence: membarrier; the hooks
/// only use a compiler fence). Async-signal-safe.
void fence_all_threads();

/// Locks the registry of live thread traces and returns its first entry
/// (linked by ThreadTrace::next); no thread starts, ends or forks until
/// unlock_thread_registry(). Not in a signal handler.
ThreadTrace* lock_thread_registry();
void unlock_thread_registry();

/// Hooks on the calling thread never record from now on (the runtime's own
/// threads).
void ignore_hooks_on_this_thread_for_good();

}  // namespace parlot::runtime
