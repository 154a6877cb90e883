// The idle flusher: a runtime thread that writes out the data of threads
// that stopped making events (a rank hung in MPI, a thread blocked on a
// lock), so that SIGKILL loses no more of them than of a busy thread.
//
// A busy thread writes its own data every PARLOT_FLUSH_MS (it looks at the
// clock every 16,384 events). A thread that makes no event never looks, and
// before this thread existed its last events stayed in memory until it made
// another one or the process ended: a job killed with SIGKILL lost exactly
// the events that say where each rank was stuck.
//
// Handshake (no cost on the hot path): the flusher claims every thread
// (ThreadTrace::flush_claim), sets kFlushRound in g_hooks_off and runs the
// asymmetric fence (membarrier) that finish_process() already uses. A
// thread then either was inside a hook (its busy flag up: the flusher
// leaves it alone) or meets kFlushRound in its next hook's one test of
// g_hooks_off and waits while it is claimed. Threads with nothing due are
// released at once; the others are written, then released.
#pragma once

#include <cstdint>

#include "hot_path/thread_trace.h"

namespace parlot::runtime {

/// Starts the idle flusher thread of this process, once (again in a fork
/// child), waking every `flush_ms` / 2 ms (at least 1 ms); 0 = none. The
/// thread blocks every signal and never records events. Called when the
/// process's trace directory exists (first event, fork child's first
/// event). Returns false when the thread cannot be created (the trace goes
/// on without it: SIGKILL may then lose an idle thread's last events).
bool start_idle_flusher(std::uint64_t flush_ms);

/// Lets the flusher make rounds: called once the process's tracing is
/// initialised and membarrier is registered (the flusher may have been
/// started before main, where the process has instrumented code).
void enable_idle_flush_rounds();

/// Fork child: the flusher thread is not there any more; the next
/// start_idle_flusher() starts one.
void idle_flusher_after_fork_in_child();

/// Ends this process's flusher thread, if it runs, and waits (at most 2 s)
/// until the kernel no longer counts it among the process's threads, for a
/// call that fails in a multi-threaded process (unshare(CLONE_NEWUSER),
/// setns() into a user or mount namespace): the program must see them
/// behave as untraced. Returns true when a flusher was ended; the caller
/// then calls resume_idle_flusher(). Not called from a hook.
bool pause_idle_flusher();

/// Starts the flusher again, with the settings it had, after
/// pause_idle_flusher() returned true (unless tracing has stopped).
void resume_idle_flusher();

/// Has the flusher write the data of every thread now, whether or not its
/// flush is due, and waits until that round is done, at most `timeout_ns`.
/// For a termination signal the program handles itself (SIGTERM, SIGINT,
/// SIGHUP, SIGXCPU: what batch systems send before SIGKILL): the events of
/// every thread, busy, idle or blocked in a system call, reach their files
/// before the program's handler runs. A thread inside a hook at that moment
/// is left as in any round (its data follows with its next block). The
/// calling thread must be outside its hooks. Async-signal-safe. Returns
/// true when the round was done in time, false when there is no flusher
/// (PARLOT_FLUSH_MS=0, no membarrier) or the time ran out.
bool flush_all_threads_now(std::uint64_t timeout_ns);

/// Wakes the flusher now, without a flush round and without waiting for
/// it: it patches the sleds the toggle signal asked for
/// (tracing_switch.h) and starts its clock tick again when tracing was
/// switched on. Async-signal-safe.
void wake_idle_flusher();

/// Once tracing has stopped: waits until a flusher round in progress ends
/// (at most `timeout_ns`). Returns true when no round is in progress.
/// Async-signal-safe.
bool wait_for_idle_flush_round(std::uint64_t timeout_ns);

/// The runtime's own code that is about to use thread trace `t` (its busy
/// flag just raised, by an atomic exchange) waits while the flusher holds
/// it.
void wait_while_flusher_holds(ThreadTrace* t);

}  // namespace parlot::runtime
