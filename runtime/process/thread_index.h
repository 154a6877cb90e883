// Thread indices (docs/FORMAT.md, `thread-<index>-<tid>.trace`): threads
// are numbered by creation, so that the same thread of two runs of a
// program that creates its threads in a fixed order has the same index.
//  - the process's initial thread (tid == pid) is 0, even when another
//    thread makes the first event (a thread started by a constructor);
//  - a thread created through pthread_create or thrd_create (interposed,
//    thread_create_interposer.cpp) gets the next value of the process's
//    creation counter (1, 2, ...), taken in its creator at the call;
//  - any other thread (created before the runtime was loaded, a raw clone)
//    takes the next value of the same counter at its first event.
// One counter for both: indices are unique within the process. They are
// not dense: a thread that makes no event has no file, and its index is
// skipped. A fork child's forking thread is the child's thread 0 and the
// counter starts again at 1 in the child.
#pragma once

#include <pthread.h>

#include <cstdint>

namespace parlot::runtime {

/// Takes the next value of the process's creation counter (1 first, after a
/// fork 1 again in the child). One atomic fetch_add: async-signal-safe.
std::uint64_t take_creation_index();

/// Records the creation index of the calling thread (set by the interposer's
/// start routine before the program's start routine runs).
void set_creation_index(std::uint64_t index);

/// The index of the calling thread's trace, by the rules above: 0 for the
/// initial thread, its creation index, or a new value of the counter. Cold
/// path (two system calls): called once, at the thread's first event.
std::uint64_t current_thread_index();

/// Creates a thread of the runtime's own (e.g. a background flusher) with
/// the C library's pthread_create, past the interposer: it takes no creation
/// index, so the program's threads keep theirs. Arguments, result and errors
/// of pthread_create(3). Defined in thread_create_interposer.cpp.
int create_runtime_thread(pthread_t* thread, const pthread_attr_t* attr, void* (*routine)(void*),
                          void* arg);

}  // namespace parlot::runtime
