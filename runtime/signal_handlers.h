// The runtime's handlers for signals that end the process, so the trace is
// complete when the program dies:
//  - SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: write the crash record (signal,
//    faulting address, thread, the thread's real stack unwound with
//    libunwind from the signal context, so frames that were never
//    instrumented show too), write out every thread's pending data, then
//    let the signal take its original course (the program's own handler if
//    it had one when tracing started, else the default action: the process
//    still dies of the same signal);
//  - SIGTERM, SIGINT with the default action: a complete flush, then death
//    by the same signal.
// A handler the program installs after tracing started replaces ours and
// runs as the program wants; the trace then ends like a SIGKILL.
#pragma once

namespace parlot::runtime {

/// Installs the handlers (process initialisation; cold).
void install_signal_handlers();

}  // namespace parlot::runtime
