// Signals. The runtime interposes sigaction() and signal() for every
// signal, records the program's disposition (what sigaction's old action
// reports) and gives the kernel its own dispatcher in place of any program
// handler, with the program's sa_flags (SA_RESTART, SA_NODEFER, SA_ONSTACK)
// and sa_mask, plus SA_SIGINFO; SA_RESETHAND is carried out by the
// dispatcher (the disposition becomes SIG_DFL as the handler starts). So
// the kernel restarts, masks and stacks exactly as untraced. The dispatcher:
//  - defers a signal that arrives while its thread is inside a hook (records
//    it, returns; the hook raises it again at its end with the same
//    siginfo), so no handler ever runs inside a hook: handlers' events are
//    recorded, and exit()/_exit() from a handler find a consistent thread;
//    synchronous faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS
//    raised by an instruction) are not deferred;
//  - runs the program's handler as the kernel would;
//  - with the default disposition of SIGSEGV, SIGBUS, SIGFPE, SIGILL,
//    SIGABRT: writes the crash record (signal, faulting address, thread, the
//    thread's real stack from the signal context), writes out every
//    thread's pending data, then lets the signal take its course (the
//    process dies of it);
//  - with the default disposition of any other signal that ends the process
//    (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE,
//    SIGPROF, SIGVTALRM, SIGXCPU, SIGTRAP, SIGSYS): a complete trace, then
//    death by the same signal.
#pragma once

namespace parlot::runtime {

class ThreadTrace;

/// Installs the dispatcher for the signals whose default action the
/// runtime watches (process initialisation; cold), and for
/// `flight_signal` (the flight recorder's dump signal; 0 = none), which
/// then asks for a flight dump while the program leaves it at its default,
/// and for `toggle_signal` (PARLOT_TOGGLE_SIGNAL; 0 = none), which then
/// switches tracing on or off (tracing_switch.h) while the program leaves
/// it at its default.
void install_signal_handlers(int flight_signal = 0, int toggle_signal = 0);

}  // namespace parlot::runtime
