// The traced program's errno across the runtime's own work inside a hook.
#pragma once

#include <cerrno>

namespace parlot::runtime {

/// Saves errno when constructed and puts it back when destroyed. Used on
/// the hooks' slow paths (a thread's first event, a fork child's new trace
/// directory, a function's first sight, a resync, writing a block, the
/// countdown's clock and flush, waiting out an idle-flusher round), whose
/// system calls may fail and set errno: the program may be between a call
/// that failed and its read of errno (an instrumented function, or a
/// recorded library call's return, in between). Not on the fast path.
class ErrnoKeeper {
 public:
  ErrnoKeeper() : saved_(errno) {}
  ~ErrnoKeeper() { errno = saved_; }
  ErrnoKeeper(const ErrnoKeeper&) = delete;
  ErrnoKeeper& operator=(const ErrnoKeeper&) = delete;

 private:
  int saved_;
};

}  // namespace parlot::runtime
