#include "process/signal_handlers.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "hot_path/current_trace.h"
#include "hot_path/hook_slow_paths.h"
#include "hot_path/hook_state.h"
#include "hot_path/stack_walk.h"
#include "hot_path/trace_owner.h"
#include "ignore_hooks.h"
#include "io/process_file.h"
#include "io/raw_io.h"
#include "next_symbol.h"
#include "parlot/format.h"
#include "process/finish.h"
#include "process/flight_dump.h"
#include "process/idle_flusher.h"
#include "process/thread_registry.h"
#include "process/tracing_switch.h"

namespace parlot::runtime {
namespace {

constexpr int kMaxSignal = 65;  // signals 1..64
constexpr int kMaxFrames = 64;
// Signals whose default action ends the process: the runtime finishes the
// trace first (a crash record too for the first five). Not SIGXFSZ (the
// runtime's own writes block and consume it) nor the real-time signals.
constexpr int kWatchedSignals[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL,    SIGABRT, SIGTERM,
                                   SIGINT,  SIGHUP,  SIGQUIT, SIGUSR1,   SIGUSR2, SIGALRM,
                                   SIGPIPE, SIGPROF, SIGXCPU, SIGVTALRM, SIGTRAP, SIGSYS};
// The kernel's SA_RESTORER (linux/signal.h; glibc's headers do not export
// it): glibc sets it, with its restorer, in every action it gives the
// kernel, so an old action read untraced carries it.
constexpr int kSaRestorer = 0x04000000;

// The program's disposition of each signal, as the program set it (and as
// sigaction's old action reports it) once `g_recorded[sig]`; before that
// the kernel's is the program's.
struct sigaction g_program[kMaxSignal];
std::atomic<bool> g_recorded[kMaxSignal];
// Signals whose default action the runtime watches (crash record, or a
// complete trace before death): its dispatcher stays installed for them.
std::atomic<bool> g_watched[kMaxSignal];
// Serialises the interposed sigaction() (a spin flag: async-signal-safe).
std::atomic_flag g_sigaction_lock = ATOMIC_FLAG_INIT;
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

// As the kernel decides: by the handler's value whatever the flags (a
// one-shot SA_SIGINFO handler becomes SIG_DFL with its flags kept).
bool is_default(const struct sigaction& a) {
  return a.sa_handler == SIG_DFL;
}
bool is_ignore(const struct sigaction& a) {
  return a.sa_handler == SIG_IGN;
}
// What batch systems and launchers send before SIGKILL (Slurm and PBS at
// the time limit, mpirun passing on its own SIGTERM, SIGXCPU at a CPU
// limit, SIGHUP when the session ends, SIGINT from a terminal).
bool is_termination_signal(int sig) {
  return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGXCPU;
}
// How long a termination signal's dispatcher waits for every thread's
// data to be written before the program's handler runs (ns).
constexpr std::uint64_t kTerminationFlushNs = 100ull * 1000 * 1000;

// The flight recorder's dump signal (PARLOT_FLIGHT_SIGNAL; 0 = none), and
// how long its dump may hold the threads (ns).
std::atomic<int> g_flight_signal{0};
// The signal that switches tracing on and off (PARLOT_TOGGLE_SIGNAL; 0 = none).
std::atomic<int> g_toggle_signal{0};
constexpr unsigned long long kFlightDumpNs = 2000ull * 1000 * 1000;

bool is_fatal(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT;
}
// A fault raised by an instruction (it happens again when the instruction
// re-executes): cannot wait for the end of a hook.
bool is_synchronous_fault(int sig, const siginfo_t* info) {
  const bool fault_signal = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
                            sig == SIGTRAP || sig == SIGSYS;
  return fault_signal && info != nullptr && info->si_code > 0;
}

void dispatch(int sig, siginfo_t* info, void* context);

// What the kernel gets for a program disposition `a` of `sig`.
struct sigaction kernel_action(int sig, const struct sigaction& a) {
  if (is_ignore(a) || (is_default(a) && !g_watched[sig].load())) return a;
  struct sigaction k;
  std::memset(&k, 0, sizeof k);
  k.sa_sigaction = dispatch;
  if (is_default(a)) {
    k.sa_flags = SA_SIGINFO | SA_ONSTACK;  // a crash record even on stack overflow
    sigemptyset(&k.sa_mask);
  } else {
    k.sa_flags = (a.sa_flags & ~(SA_RESETHAND | kSaRestorer)) | SA_SIGINFO;
    k.sa_mask = a.sa_mask;
  }
  return k;
}

// Records `a` as the program's disposition of `sig` and gives the kernel
// its counterpart. Returns 0 or -1 (errno set), the record unchanged.
int set_disposition(int sig, const struct sigaction& a) {
  const struct sigaction k = kernel_action(sig, a);
  if (real_sigaction(sig, &k, nullptr) != 0) return -1;
  struct sigaction recorded = a;
  // Report what the kernel would have: glibc's restorer, and a mask
  // without the signals that cannot be blocked.
  struct sigaction now;
  if (real_sigaction(sig, nullptr, &now) == 0) {
    recorded.sa_flags |= now.sa_flags & kSaRestorer;
    recorded.sa_restorer = now.sa_restorer;
  }
  sigdelset(&recorded.sa_mask, SIGKILL);
  sigdelset(&recorded.sa_mask, SIGSTOP);
  g_program[sig] = recorded;
  g_recorded[sig].store(true);
  return 0;
}

// Runs the program's handler `a` for `sig` as the kernel would have.
void call_program_handler(const struct sigaction& a, int sig, siginfo_t* info, void* context) {
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
    case SIGQUIT:
      return "SIGQUIT";
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
  std::uintptr_t frames[kMaxFrames];
  const std::size_t n = walk_interrupted_stack(context, frames, kMaxFrames);
  for (std::size_t i = 0; i < n; ++i) t.str("frame ").hex(frames[i]).ch('\n');
  write_process_file("crash", t.data(), t.size());
}

// Gives the kernel the program's (default) disposition and makes sure the
// signal is delivered again once this handler returns.
void resume_original_course(int sig, const siginfo_t* info) {
  g_watched[sig].store(false);
  real_sigaction(sig, &g_program[sig], nullptr);
  // A fault raised by an instruction happens again when it re-executes; a
  // signal sent by kill/raise/abort must be sent again.
  if (!is_synchronous_fault(sig, info)) {
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
  }
}

// The default action of a watched signal: end the trace, then die of it.
void on_default_action(int sig, siginfo_t* info, void* context) {
  // Not in a child that shares this trace's state without being its
  // process (vfork, raw clone): the crash file is its parent's.
  if (is_fatal(sig) && is_traced_process()) {
    if (g_handling.exchange(1) == 0) write_crash_record(sig, info, context);
  }
  finish_process(FinishReason::kSignal);  // waits if another thread is finishing
  resume_original_course(sig, info);
}

void defer(ThreadTrace* t, int sig, const siginfo_t* info) {
  if (info != nullptr) {
    t->deferred_info[sig - 1] = *info;
  } else {
    std::memset(&t->deferred_info[sig - 1], 0, sizeof(siginfo_t));
    t->deferred_info[sig - 1].si_signo = sig;
    t->deferred_info[sig - 1].si_code = SI_TKILL;
  }
  t->deferred_signals.fetch_or(std::uint64_t{1} << (sig - 1), std::memory_order_relaxed);
}

void dispatch(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  ThreadTrace* t = tls_thread_trace;
  if (t != nullptr && (t->busy.load(std::memory_order_relaxed) & ThreadTrace::kInHook) != 0 &&
      !is_synchronous_fault(sig, info) && sig < kMaxSignal) {
    defer(t, sig, info);  // raised again when the hook ends
    errno = saved_errno;
    return;
  }
  const struct sigaction a = g_program[sig];
  if (is_default(a) && sig == g_flight_signal.load(std::memory_order_relaxed)) {
    // The flight recorder's signal: a dump, and the program runs on.
    if (is_traced_process()) flight_dump_now(kFlightDumpNs);
  } else if (is_default(a) && sig == g_toggle_signal.load(std::memory_order_relaxed)) {
    // The toggle signal: tracing switched, and the program runs on.
    if (is_traced_process()) toggle_tracing_from_signal();
  } else if (is_default(a)) {
    on_default_action(sig, info, context);
  } else if (is_ignore(a)) {
    // Set to SIG_IGN while this one was on its way: nothing to do.
  } else {
    if (a.sa_flags & SA_RESETHAND) {
      // One-shot: the handler is SIG_DFL from now on (flags and mask kept),
      // as the kernel would have made it before running the handler.
      struct sigaction dfl = a;
      dfl.sa_handler = SIG_DFL;
      g_program[sig] = dfl;
      if (!g_watched[sig].load()) real_sigaction(sig, &dfl, nullptr);
    }
    // A batch system's first word (a SIGKILL follows): every thread's
    // events reach their files before the program's handler runs.
    if (is_termination_signal(sig) && is_traced_process() && !tracing_stopped()) {
      flush_all_threads_now(kTerminationFlushNs);
    }
    errno = saved_errno;
    // What the handler leaves in errno stays there, as untraced: the
    // kernel does not restore errno when a handler returns.
    call_program_handler(a, sig, info, context);
    return;
  }
  errno = saved_errno;
}

// Takes the record of `sig` from the kernel if the program's disposition
// was set without the interposer (before the runtime was loaded, or by
// the C library itself). Under g_sigaction_lock.
void record_from_kernel(int sig) {
  if (g_recorded[sig].load()) return;
  struct sigaction k;
  if (real_sigaction(sig, nullptr, &k) != 0) return;
  if (!is_default(k) && !is_ignore(k) && k.sa_sigaction == dispatch) return;  // cannot be
  g_program[sig] = k;
  g_recorded[sig].store(true);
}

class SigactionLock {
 public:
  SigactionLock() {
    while (g_sigaction_lock.test_and_set(std::memory_order_acquire)) sched_yield();
  }
  ~SigactionLock() { g_sigaction_lock.clear(std::memory_order_release); }
  SigactionLock(const SigactionLock&) = delete;
  SigactionLock& operator=(const SigactionLock&) = delete;
};

// Watches `sig` like the others, as a signal of the runtime's own
// (`slot`: its number) while the program leaves it at its default. Under
// g_sigaction_lock.
void install_own_signal(int sig, std::atomic<int>& slot) {
  if (sig <= 0 || sig >= kMaxSignal || sig == SIGKILL || sig == SIGSTOP) return;
  record_from_kernel(sig);
  g_watched[sig].store(true);
  slot.store(sig);
  const struct sigaction k = kernel_action(sig, g_program[sig]);
  real_sigaction(sig, &k, nullptr);
}

}  // namespace

void install_signal_handlers(int flight_signal, int toggle_signal) {
  SigactionLock lock;
  for (const int sig : kWatchedSignals) {
    record_from_kernel(sig);
    g_watched[sig].store(true);
    const struct sigaction k = kernel_action(sig, g_program[sig]);
    real_sigaction(sig, &k, nullptr);
  }
  // Watched like the others: while the program leaves them at their
  // default, the flight signal asks for a flight dump and the toggle
  // signal switches tracing, instead of ending the process.
  install_own_signal(flight_signal, g_flight_signal);
  if (toggle_signal != flight_signal) install_own_signal(toggle_signal, g_toggle_signal);
}

void raise_deferred_signals(ThreadTrace* t) {
  // A handler run by the raise may set errno, and what it sets stays (as
  // untraced); a raise that fails leaves errno as it was.
  std::uint64_t pending = t->deferred_signals.exchange(0, std::memory_order_relaxed);
  const pid_t pid = getpid();
  const auto tid = static_cast<pid_t>(syscall(SYS_gettid));
  while (pending != 0) {
    const int sig = __builtin_ctzll(pending) + 1;
    pending &= pending - 1;
    siginfo_t info = t->deferred_info[sig - 1];
    const int before = errno;
    // To itself a thread may send any siginfo: the handler sees the
    // original one; mask and flags stay the kernel's business.
    if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &info) != 0) {
      errno = before;
      if (syscall(SYS_tgkill, pid, tid, sig) != 0) errno = before;
    }
  }
}

}  // namespace parlot::runtime

extern "C" {

/// Interposes sigaction(2) for every signal: records the program's
/// disposition (reported back as the old action) and gives the kernel the
/// runtime's dispatcher with the program's flags and mask in place of a
/// program handler (signal_handlers.h); SIG_IGN and, for signals the
/// runtime does not watch, SIG_DFL go to the kernel as they are.
[[gnu::visibility("default"), gnu::no_instrument_function]] int sigaction(
    int sig, const struct sigaction* act, struct sigaction* old) {
  using namespace parlot::runtime;
  if (sig <= 0 || sig >= kMaxSignal || sig == SIGKILL || sig == SIGSTOP) {
    return real_sigaction(sig, act, old);
  }
  SigactionLock lock;
  if (!g_recorded[sig].load()) {
    if (act == nullptr) return real_sigaction(sig, nullptr, old);
    record_from_kernel(sig);
  }
  const struct sigaction previous = g_program[sig];
  if (act != nullptr && set_disposition(sig, *act) != 0) return -1;
  if (old != nullptr) *old = previous;
  return 0;
}

/// Interposes signal(2) with glibc's BSD semantics: SA_RESTART, the signal
/// blocked in its handler.
[[gnu::visibility("default"), gnu::no_instrument_function]] sighandler_t signal(
    int sig, sighandler_t handler) {
  struct sigaction act, old;
  std::memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;
  sigemptyset(&act.sa_mask);
  if (sig > 0 && sig < 65) sigaddset(&act.sa_mask, sig);
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;  // sa_handler and sa_sigaction share their storage
}

/// Interposes bsd_signal(3): the same as signal().
[[gnu::visibility("default"), gnu::no_instrument_function]] sighandler_t bsd_signal(
    int sig, sighandler_t handler) {
  return signal(sig, handler);
}

/// Interposes sysv_signal(3): a one-shot handler, the signal not blocked in
/// it, no restart (glibc: SA_RESETHAND | SA_NODEFER).
[[gnu::visibility("default"), gnu::no_instrument_function]] sighandler_t sysv_signal(
    int sig, sighandler_t handler) {
  struct sigaction act, old;
  std::memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  act.sa_flags = SA_RESETHAND | SA_NODEFER;
  sigemptyset(&act.sa_mask);
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

}  // extern "C"
