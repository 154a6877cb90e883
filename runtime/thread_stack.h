// The calling thread's stack, found without allocating: pthread_getattr_np
// allocates (a cpuset, and stdio for the main thread's /proc/self/maps), and
// a thread's first event may run inside the program's own malloc with its
// lock held, where the runtime must not allocate.
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

}  // namespace parlot::runtime
