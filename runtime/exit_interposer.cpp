// _exit() and _Exit() skip atexit handlers and ELF destructors, so the
// runtime's end-of-process work would never run. The runtime defines both
// (symbol interposition, whether preloaded or linked): finish the trace,
// then end the process as the program asked. A vfork child, which shares
// its parent's memory, leaves the parent's trace alone.
#include <sys/syscall.h>
#include <unistd.h>

#include "process_trace.h"

namespace {

[[noreturn]] void finish_and_exit(int status) {
  if (parlot::runtime::is_traced_process()) parlot::runtime::finish_process();
  for (;;) syscall(SYS_exit_group, status);
}

}  // namespace

extern "C" {

/// Interposes glibc's _exit(2): ends the trace, then exits with `status`.
[[gnu::visibility("default"), gnu::no_instrument_function]] void _exit(int status) {
  finish_and_exit(status);
}

/// Interposes C99 _Exit: same as _exit.
[[gnu::visibility("default"), gnu::no_instrument_function]] void _Exit(int status) {
  finish_and_exit(status);
}

}  // extern "C"
