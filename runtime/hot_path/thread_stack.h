// The calling thread's stack, known without allocating at its first event:
// pthread_getattr_np allocates (a cpuset, and stdio for the main thread's
// /proc/self/maps), and a thread's first event may run inside the program's
// own malloc with its lock held, where the runtime must not allocate. So
// the stack is remembered where allocating is safe (a thread's start,
// before main), and read from /proc/self/maps with raw system calls for a
// thread started otherwise. (Reading the maps alone is not enough: the
// kernel merges a thread's stack with an adjacent anonymous mapping, such
// as a signal stack, into one line.)
#pragma once

#include <cstdint>

namespace parlot::runtime {

/// Finds the stack of the calling thread, [*lo, *hi) in bytes: the mapping
/// of /proc/self/maps that holds the stack pointer (read with raw system
/// calls). For the process's main thread, whose stack grows on demand, *lo
/// is where it may grow to: RLIMIT_STACK below the top, not below the end of
/// the mapping under it (as glibc's pthread_getattr_np computes it).
/// Returns false (and leaves *lo, *hi alone) when the file cannot be read
/// or no mapping holds the stack pointer (an alternate signal stack in a
/// mapping of its own still counts: the caller passes the thread's own
/// stack pointer at its first event). Async-signal-safe; cold (a few
/// system calls and one pass over the maps).
bool find_thread_stack(std::uintptr_t* lo, std::uintptr_t* hi);

/// Remembers the calling thread's stack as glibc knows it
/// (pthread_getattr_np), for its first event. Call only where the thread
/// holds none of the program's locks: a thread's start (the pthread_create
/// interposer's start routine), before main. Hooks are ignored meanwhile
/// (pthread_getattr_np may call the program's own malloc). Cold.
void remember_thread_stack();

/// The calling thread's stack, [*lo, *hi) in bytes: the one remembered,
/// else find_thread_stack()'s (a thread the interposer did not start).
/// Allocates nothing. Returns false when neither is known.
bool thread_stack(std::uintptr_t* lo, std::uintptr_t* hi);

}  // namespace parlot::runtime
