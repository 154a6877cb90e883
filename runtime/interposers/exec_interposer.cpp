// The exec family replaces the process image (every exec entry point glibc
// 2.36 exports: execve, execv, execvp, execvpe, execl, execlp, execle,
// fexecve, execveat; posix_spawn and system() exec in a child): the runtime's end-of-process
// work would never run and the pre-exec image's buffered events would be
// lost. The runtime interposes the exec functions (whether preloaded or
// linked): finish the trace, then exec. If the exec fails the program goes
// on untraced (the trace has ended). A vfork child, which shares its
// parent's memory, leaves the parent's trace alone. A relative PARLOT_DIR
// in the environment passed on is made absolute (trace_dir_env.h), so the
// new image traces where this one did even after a chdir.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>

#include "hot_path/trace_owner.h"
#include "ignore_hooks.h"
#include "io/trace_dir_env.h"
#include "next_symbol.h"
#include "process/finish.h"

extern char** environ;

namespace {

using parlot::runtime::ExecEnvironment;
using parlot::runtime::next_symbol;

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvFn = int (*)(const char*, char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
using ExecveatFn = int (*)(int, const char*, char* const[], char* const[], int);

ExecveFn g_execve, g_execvpe;
ExecvFn g_execv, g_execvp;
FexecveFn g_fexecve;
ExecveatFn g_execveat;

[[gnu::constructor(101)]] void resolve_exec_functions() {
  parlot::runtime::IgnoreHooksOnThisThread quiet;  // dlsym may call malloc
  g_execve = reinterpret_cast<ExecveFn>(dlsym(RTLD_NEXT, "execve"));
  g_execvpe = reinterpret_cast<ExecveFn>(dlsym(RTLD_NEXT, "execvpe"));
  g_execv = reinterpret_cast<ExecvFn>(dlsym(RTLD_NEXT, "execv"));
  g_execvp = reinterpret_cast<ExecvFn>(dlsym(RTLD_NEXT, "execvp"));
  g_fexecve = reinterpret_cast<FexecveFn>(dlsym(RTLD_NEXT, "fexecve"));
  g_execveat = reinterpret_cast<ExecveatFn>(dlsym(RTLD_NEXT, "execveat"));
}

void end_trace_before_exec() {
  if (parlot::runtime::is_traced_process()) parlot::runtime::finish_process();
}

// Collects the variadic arguments of execl/execlp/execle after `first`,
// up to and including the terminating NULL, into `argv` (kMaxArgs room).
// Returns false (errno E2BIG) when there are more.
constexpr int kMaxArgs = 4096;
bool collect_args(const char* first, va_list& ap, char** argv) {
  int n = 0;
  argv[n++] = const_cast<char*>(first);
  while (argv[n - 1] != nullptr && n < kMaxArgs) argv[n++] = va_arg(ap, char*);
  if (argv[n - 1] == nullptr) return true;
  errno = E2BIG;
  return false;
}

}  // namespace

extern "C" {

[[gnu::visibility("default"), gnu::no_instrument_function]] int execve(const char* path,
                                                                       char* const argv[],
                                                                       char* const envp[]) {
  end_trace_before_exec();
  const ExecEnvironment env(envp);
  return next_symbol(g_execve, "execve")(path, argv, env.get());
}

[[gnu::visibility("default"), gnu::no_instrument_function]] int execvpe(const char* file,
                                                                        char* const argv[],
                                                                        char* const envp[]) {
  end_trace_before_exec();
  const ExecEnvironment env(envp);
  return next_symbol(g_execvpe, "execvpe")(file, argv, env.get());
}

[[gnu::visibility("default"), gnu::no_instrument_function]] int execv(const char* path,
                                                                      char* const argv[]) {
  end_trace_before_exec();
  // The process's environment: its PARLOT_DIR was made absolute at load,
  // unless the program set a relative one since.
  const ExecEnvironment env(environ);
  if (env.get() != environ) return next_symbol(g_execve, "execve")(path, argv, env.get());
  return next_symbol(g_execv, "execv")(path, argv);
}

[[gnu::visibility("default"), gnu::no_instrument_function]] int execvp(const char* file,
                                                                       char* const argv[]) {
  end_trace_before_exec();
  const ExecEnvironment env(environ);
  if (env.get() != environ) return next_symbol(g_execvpe, "execvpe")(file, argv, env.get());
  return next_symbol(g_execvp, "execvp")(file, argv);
}

[[gnu::visibility("default"), gnu::no_instrument_function]] int fexecve(int fd, char* const argv[],
                                                                        char* const envp[]) {
  end_trace_before_exec();
  const ExecEnvironment env(envp);
  return next_symbol(g_fexecve, "fexecve")(fd, argv, env.get());
}

[[gnu::visibility("default"), gnu::no_instrument_function]] int execveat(
    int dir_fd, const char* path, char* const argv[], char* const envp[], int flags) {
  end_trace_before_exec();
  const ExecEnvironment env(envp);
  return next_symbol(g_execveat, "execveat")(dir_fd, path, argv, env.get(), flags);
}

[[gnu::visibility("default"), gnu::no_instrument_function]] int execl(const char* path,
                                                                      const char* arg, ...) {
  char* argv[kMaxArgs];
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect_args(arg, ap, argv);
  va_end(ap);
  return ok ? execv(path, argv) : -1;
}

[[gnu::visibility("default"), gnu::no_instrument_function]] int execlp(const char* file,
                                                                       const char* arg, ...) {
  char* argv[kMaxArgs];
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect_args(arg, ap, argv);
  va_end(ap);
  return ok ? execvp(file, argv) : -1;
}

[[gnu::visibility("default"), gnu::no_instrument_function]] int execle(const char* path,
                                                                       const char* arg, ...) {
  char* argv[kMaxArgs];
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect_args(arg, ap, argv);
  char* const* envp = ok ? va_arg(ap, char* const*) : nullptr;
  va_end(ap);
  return ok ? execve(path, argv, envp) : -1;
}

}  // extern "C"
