#include "signal_handlers.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "next_symbol.h"
#include "parlot/format.h"
#include "process_trace.h"
#include "raw_io.h"

namespace parlot::runtime {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int kTerminationSignals[] = {SIGTERM, SIGINT};
constexpr int kMaxSignal = 65;
constexpr int kMaxFrames = 64;

// The program's disposition of each signal we handle: what it had when
// tracing started, then whatever it sets through signal()/sigaction(),
// which the runtime interposes while its own handler stays installed.
struct sigaction g_previous[kMaxSignal];
std::atomic<bool> g_installed[kMaxSignal];
using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
SigactionFn g_real_sigaction;

// Resolved before main, not in a hook (dlsym may take locks and malloc).
[[gnu::constructor(101)]] void resolve_sigaction() {
  IgnoreHooksOnThisThread quiet;
  g_real_sigaction = reinterpret_cast<SigactionFn>(dlsym(RTLD_NEXT, "sigaction"));
}

int real_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  return next_symbol(g_real_sigaction, "sigaction")(sig, act, old);
}

bool is_default(const struct sigaction& a) {
  return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL;
}
bool is_ignore(const struct sigaction& a) {
  return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN;
}

// Runs the program's own handler for `sig` as the kernel would have.
void call_program_handler(int sig, siginfo_t* info, void* context) {
  const struct sigaction& a = g_previous[sig];
  if (a.sa_flags & SA_SIGINFO) {
    a.sa_sigaction(sig, info, context);
  } else {
    a.sa_handler(sig);
  }
}
std::atomic<int> g_handling{0};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "?";
  }
}

// The "crash" file of the process directory (docs/FORMAT.md).
void write_crash_record(int sig, const siginfo_t* info, void* context) {
  static char buf[8192];
  TextBuilder t(buf, sizeof buf);
  t.str(format::kCrashMagicLine).ch('\n');
  t.str("signal ").i64(sig).ch('\n');
  t.str("name ").str(signal_name(sig)).ch('\n');
  t.str("code ").i64(info != nullptr ? info->si_code : 0).ch('\n');
  t.str("address ")
      .hex(info != nullptr ? reinterpret_cast<std::uintptr_t>(info->si_addr) : 0)
      .ch('\n');
  t.str("tid ").u64(static_cast<std::uint64_t>(syscall(SYS_gettid))).ch('\n');
  t.str("in_tracer ").u64(current_thread_in_hook() ? 1 : 0).ch('\n');
  // The faulting thread's stack, innermost first, from the signal context.
  unw_cursor_t cursor;
  if (context != nullptr &&
      unw_init_local2(&cursor, static_cast<unw_context_t*>(context), UNW_INIT_SIGNAL_FRAME) == 0) {
    for (int i = 0; i < kMaxFrames; ++i) {
      unw_word_t ip = 0;
      if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
      t.str("frame ").hex(ip).ch('\n');
      if (unw_step(&cursor) <= 0) break;
    }
  }
  write_process_file("crash", t.data(), t.size());
}

// Puts back the program's (default) disposition and makes sure the signal
// is delivered again once this handler returns.
void resume_original_course(int sig, const siginfo_t* info) {
  g_installed[sig].store(false);
  real_sigaction(sig, &g_previous[sig], nullptr);
  // A fault raised by an instruction happens again when it re-executes; a
  // signal sent by kill/raise/abort (si_code <= 0) must be sent again.
  if (info == nullptr || info->si_code <= 0 || sig == SIGTERM || sig == SIGINT) {
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
  }
}

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (!is_default(g_previous[sig])) {
    // The program handles it (and may recover: guard pages, a GC): its
    // handler runs, the trace goes on. If it exits, _exit/exit end the trace.
    call_program_handler(sig, info, context);
    errno = saved_errno;
    return;
  }
  if (g_handling.exchange(1) == 0) {
    write_crash_record(sig, info, context);
    finish_process(FinishReason::kSignal);
  }
  resume_original_course(sig, info);
  errno = saved_errno;
}

void on_termination_signal(int sig, siginfo_t* info, void* context) {
  if (!is_default(g_previous[sig])) {
    call_program_handler(sig, info, context);
    return;
  }
  if (g_handling.exchange(1) == 0) finish_process(FinishReason::kSignal);
  resume_original_course(sig, info);
}

void install(int sig, void (*handler)(int, siginfo_t*, void*), bool only_over_default) {
  struct sigaction old;
  if (real_sigaction(sig, nullptr, &old) != 0) return;
  if (is_ignore(old) || (only_over_default && !is_default(old))) return;
  g_previous[sig] = old;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (real_sigaction(sig, &sa, nullptr) == 0) g_installed[sig].store(true);
}

}  // namespace

void install_signal_handlers() {
  for (const int sig : kFatalSignals) install(sig, on_fatal_signal, false);
  for (const int sig : kTerminationSignals) install(sig, on_termination_signal, true);
}

}  // namespace parlot::runtime

extern "C" {

/// Interposes sigaction(2). For the signals the runtime handles, the
/// program's disposition is recorded (and reported back) while the
/// runtime's handler stays installed and chains to it; SIG_IGN is applied
/// for real. Other signals go straight through.
[[gnu::visibility("default"), gnu::no_instrument_function]] int sigaction(
    int sig, const struct sigaction* act, struct sigaction* old) {
  using namespace parlot::runtime;
  if (sig <= 0 || sig >= kMaxSignal || !g_installed[sig].load()) {
    return real_sigaction(sig, act, old);
  }
  if (old != nullptr) *old = g_previous[sig];
  if (act == nullptr) return 0;
  g_previous[sig] = *act;
  if (is_ignore(*act)) {
    g_installed[sig].store(false);
    return real_sigaction(sig, act, nullptr);
  }
  return 0;
}

/// Interposes signal(2) (BSD semantics, as glibc's) on top of sigaction.
[[gnu::visibility("default"), gnu::no_instrument_function]] sighandler_t signal(
    int sig, sighandler_t handler) {
  struct sigaction act, old;
  std::memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;
  sigemptyset(&act.sa_mask);
  sigaddset(&act.sa_mask, sig);
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;  // sa_handler and sa_sigaction share their storage
}

}  // extern "C"
