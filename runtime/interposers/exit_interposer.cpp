// Ends of the process the runtime's ELF destructor would not see, or not
// see safely. The runtime defines these (symbol interposition, whether
// preloaded or linked):
//  - _exit() and _Exit() skip atexit handlers and ELF destructors: finish
//    the trace, then end the process as the program asked;
//  - exit() is not thread-safe in glibc: a second exit() on another thread
//    reaches exit_group while the first is still writing the trace (and
//    running the program's atexit handlers). The first caller goes on;
//    later callers on other threads wait for the process to end, as they
//    would if the first exit had been instantaneous;
//  - return from main: glibc calls exit internally (not interposable), so
//    the runtime wraps main (through __libc_start_main) and calls the
//    interposed exit() with main's result.
// A vfork child, which shares its parent's memory, leaves the parent's
// trace alone.
#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "hot_path/trace_owner.h"
#include "ignore_hooks.h"
#include "next_symbol.h"
#include "process/finish.h"

namespace {

using ExitFn = void (*)(int);
using MainFn = int (*)(int, char**, char**);
using StartMainFn = int (*)(MainFn, int, char**, void (*)(), void (*)(), void (*)(), void*);

ExitFn g_real_exit;
StartMainFn g_real_start_main;
MainFn g_program_main;
std::atomic<long> g_exiting_tid{0};

[[gnu::constructor(101)]] void resolve_exit() {
  parlot::runtime::IgnoreHooksOnThisThread quiet;  // dlsym may call malloc
  g_real_exit = reinterpret_cast<ExitFn>(dlsym(RTLD_NEXT, "exit"));
}

[[noreturn]] void finish_and_exit(int status) {
  if (parlot::runtime::is_traced_process()) parlot::runtime::finish_process();
  for (;;) syscall(SYS_exit_group, status);
}

// The program's main, then exit() through the interposer.
int main_then_exit(int argc, char** argv, char** envp) {
  exit(g_program_main(argc, argv, envp));
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

/// Interposes exit(3): the first thread to call it ends the process
/// (atexit handlers, destructors, the runtime's end of trace); a thread
/// calling it later waits (signals still reach it) until the process ends.
[[gnu::visibility("default"), gnu::no_instrument_function]] void exit(int status) {
  const long self = syscall(SYS_gettid);
  long expected = 0;
  if (!g_exiting_tid.compare_exchange_strong(expected, self) && expected != self &&
      parlot::runtime::is_traced_process()) {
    for (;;) pause();
  }
  parlot::runtime::next_symbol(g_real_exit, "exit")(status);
  __builtin_unreachable();
}

/// Interposes glibc's __libc_start_main to run main through
/// main_then_exit (a return from main is then an interposed exit()).
[[gnu::visibility("default"), gnu::no_instrument_function]] int __libc_start_main(
    MainFn main, int argc, char** argv, void (*init)(), void (*fini)(), void (*rtld_fini)(),
    void* stack_end) {
  g_program_main = main;
  return parlot::runtime::next_symbol(g_real_start_main, "__libc_start_main")(
      main_then_exit, argc, argv, init, fini, rtld_fini, stack_end);
}

}  // extern "C"
