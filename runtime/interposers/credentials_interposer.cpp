// A server that starts as root and drops to another user (setuid,
// seteuid, setreuid, setresuid) would leave its trace behind: the runtime
// opens its trace files by path at every write (a program may close or
// reuse any descriptor), and the process directory, made by root with mode
// 0700, is then closed to it. Its writes failed ("cannot write the trace
// ... Permission denied; tracing is off") and the trace ended without a
// trailer. The runtime interposes these calls (whether preloaded or
// linked): when the effective user goes from root to another user, it
// first makes that user the owner of the trace (give_trace_to), then makes
// the call. The program sees the call's own result and errno.
#include <unistd.h>

#include <cerrno>

#include "hot_path/trace_owner.h"
#include "ignore_hooks.h"
#include "next_symbol.h"
#include "process/process_trace.h"

namespace {

using SetuidFn = int (*)(uid_t);
using SetreuidFn = int (*)(uid_t, uid_t);
using SetresuidFn = int (*)(uid_t, uid_t, uid_t);

SetuidFn g_setuid, g_seteuid;
SetreuidFn g_setreuid;
SetresuidFn g_setresuid;

[[gnu::constructor(101)]] void resolve_credential_functions() {
  parlot::runtime::IgnoreHooksOnThisThread quiet;  // dlsym may call malloc
  g_setuid = reinterpret_cast<SetuidFn>(dlsym(RTLD_NEXT, "setuid"));
  g_seteuid = reinterpret_cast<SetuidFn>(dlsym(RTLD_NEXT, "seteuid"));
  g_setreuid = reinterpret_cast<SetreuidFn>(dlsym(RTLD_NEXT, "setreuid"));
  g_setresuid = reinterpret_cast<SetresuidFn>(dlsym(RTLD_NEXT, "setresuid"));
}

// Before a call that makes `euid` the effective user ((uid_t)-1: unchanged).
void before_effective_user(uid_t euid) {
  if (euid == static_cast<uid_t>(-1) || euid == 0 || geteuid() != 0) return;
  if (!parlot::runtime::is_traced_process()) return;
  const int saved_errno = errno;
  parlot::runtime::give_trace_to(euid, getegid());
  errno = saved_errno;
}

}  // namespace

extern "C" {

// As root, setuid() sets every user id; otherwise only the effective one.
[[gnu::visibility("default"), gnu::no_instrument_function]] int setuid(uid_t uid) {
  before_effective_user(uid);
  return parlot::runtime::next_symbol(g_setuid, "setuid")(uid);
}

[[gnu::visibility("default"), gnu::no_instrument_function]] int seteuid(uid_t euid) {
  before_effective_user(euid);
  return parlot::runtime::next_symbol(g_seteuid, "seteuid")(euid);
}

[[gnu::visibility("default"), gnu::no_instrument_function]] int setreuid(uid_t ruid, uid_t euid) {
  before_effective_user(euid);
  return parlot::runtime::next_symbol(g_setreuid, "setreuid")(ruid, euid);
}

[[gnu::visibility("default"), gnu::no_instrument_function]] int setresuid(uid_t ruid, uid_t euid,
                                                                          uid_t suid) {
  before_effective_user(euid);
  return parlot::runtime::next_symbol(g_setresuid, "setresuid")(ruid, euid, suid);
}

}  // extern "C"
