// The registry of live thread traces, as the idle flusher and the signal
// handlers use it, and the calling thread's standing with the hooks.
// Defined in thread_registry.cpp.
#pragma once

namespace parlot::runtime {

class ThreadTrace;

/// Locks the registry of live thread traces and returns its first entry
/// (linked by ThreadTrace::next); no thread starts, ends or forks until
/// unlock_thread_registry(). Not in a signal handler.
ThreadTrace* lock_thread_registry();
void unlock_thread_registry();

/// Hooks on the calling thread never record from now on (the runtime's own
/// threads).
void ignore_hooks_on_this_thread_for_good();

/// True when the calling thread is inside one of the runtime's hooks.
bool current_thread_in_hook();

}  // namespace parlot::runtime
