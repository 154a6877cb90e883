// The cold paths the hooks (hooks.cpp) take, defined above the hot path:
// a thread's first event (process/process_trace.cpp), a hook that meets an
// idle-flusher round (process/idle_flusher.cpp) and the signals deferred
// while a thread was inside a hook (process/signal_handlers.cpp). Declared
// here so that the hot path includes nothing above it.
#pragma once

namespace parlot::runtime {

class ThreadTrace;

/// Slow path of a hook whose thread has no trace yet: initialises the
/// process on its first event, creates the thread's trace, or resumes it in
/// a fork child. Returns nullptr when this event must not be recorded.
ThreadTrace* attach_current_thread();

/// Slow path of a hook that met kFlushRound in g_hooks_off: waits while
/// the flusher holds thread `t`. Returns true when the hook may record
/// (only the flusher's round was on), false when tracing stopped or is
/// paused for the process. Spins and yields only: leaves errno alone.
[[gnu::cold]] bool hook_may_record_after_flush_round(ThreadTrace* t);

/// Raises again, on the calling thread and with their siginfo, the signals
/// deferred while `t` was inside a hook. Cold; async-signal-safe.
void raise_deferred_signals(ThreadTrace* t);

}  // namespace parlot::runtime
