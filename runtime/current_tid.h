// The calling thread's kernel thread ID, for the runtime's own bookkeeping
// (which thread is forking, which is finishing the trace).
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

namespace parlot::runtime {

/// The calling thread's kernel thread ID (gettid(2), a raw system call: no
/// libc wrapper needed). One system call; async-signal-safe.
inline long current_tid() {
  return syscall(SYS_gettid);
}

}  // namespace parlot::runtime
