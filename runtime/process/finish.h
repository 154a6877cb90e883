// The end of the process's trace, for whatever ends the process: the
// runtime's ELF destructor, exit and _exit, exec, the signal handlers and
// the idle flusher (a write that failed). Defined in finish.cpp.
#pragma once

namespace parlot::runtime {

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

}  // namespace parlot::runtime
