// unshare() and setns() fail with EINVAL in a multi-threaded process for
// the namespaces a program most often enters alone: a new user namespace
// (unshare(CLONE_NEWUSER), as unprivileged sandboxes and container tools
// do), unsharing CLONE_THREAD, CLONE_SIGHAND or CLONE_VM, and joining a user
// or mount namespace with setns(). The runtime's idle flusher thread would
// make every traced process multi-threaded, so these calls would fail
// traced and succeed untraced. The runtime interposes both (whether
// preloaded or linked): it ends the flusher, waits until the kernel no
// longer counts it, makes the call, and starts the flusher again.
// A program that makes the raw system call (syscall(SYS_unshare, ...))
// bypasses this; PARLOT_FLUSH_MS=0 then avoids the flusher altogether.
#include <pthread.h>
#include <sched.h>

#include <cerrno>

#include "ignore_hooks.h"
#include "next_symbol.h"
#include "process/idle_flusher.h"

namespace {

using UnshareFn = int (*)(int);
using SetnsFn = int (*)(int, int);

UnshareFn g_unshare;
SetnsFn g_setns;

[[gnu::constructor(101)]] void resolve_namespace_functions() {
  parlot::runtime::IgnoreHooksOnThisThread quiet;  // dlsym may call malloc
  g_unshare = reinterpret_cast<UnshareFn>(dlsym(RTLD_NEXT, "unshare"));
  g_setns = reinterpret_cast<SetnsFn>(dlsym(RTLD_NEXT, "setns"));
}

// One call at a time pauses the flusher: a second thread's call waits for
// the first's (both would fail untraced anyway, the process having threads).
pthread_mutex_t g_pause_lock = PTHREAD_MUTEX_INITIALIZER;

// Runs `call` with the idle flusher ended (when it ran), keeping the call's
// errno.
template <class Call>
int without_flusher(Call call) {
  pthread_mutex_lock(&g_pause_lock);
  const bool paused = parlot::runtime::pause_idle_flusher();
  const int result = call();
  const int saved_errno = errno;
  if (paused) parlot::runtime::resume_idle_flusher();
  pthread_mutex_unlock(&g_pause_lock);
  errno = saved_errno;
  return result;
}

// The unshare() flags the kernel refuses in a multi-threaded process
// (CLONE_NEWUSER implies CLONE_THREAD).
constexpr int kSingleThreadFlags = CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM;

}  // namespace

extern "C" {

[[gnu::visibility("default"), gnu::no_instrument_function]] int unshare(int flags) {
  const UnshareFn next = parlot::runtime::next_symbol(g_unshare, "unshare");
  if ((flags & kSingleThreadFlags) == 0) return next(flags);
  return without_flusher([&] { return next(flags); });
}

// The namespace type of `fd` may be 0 (any) or a pidfd's set of types, so
// every setns() runs without the flusher.
[[gnu::visibility("default"), gnu::no_instrument_function]] int setns(int fd, int nstype) {
  const SetnsFn next = parlot::runtime::next_symbol(g_setns, "setns");
  return without_flusher([&] { return next(fd, nstype); });
}

}  // extern "C"
