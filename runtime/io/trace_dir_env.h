// A relative PARLOT_DIR names a directory relative to where the traced
// program was started, for that program and for every program it starts:
// the runtime resolves it against the current directory captured when it
// was loaded (a constructor, before the program's own), and hands programs
// started later an absolute PARLOT_DIR, so a program that changes
// directory and then execs, calls system() or posix_spawn()s another
// traced program has both traces in the directory the user named.
#pragma once

#include <cstddef>

namespace parlot::runtime {

/// Makes trace directory `dir` absolute in `out` (capacity `cap`): `dir`
/// itself when absolute; otherwise joined to the current directory the
/// process had when the runtime was loaded (the present one if that could
/// not be read), leading "./" dropped. Returns 0, ENAMETOOLONG, or the
/// errno of getcwd. Async-signal-safe.
int absolute_trace_dir(const char* dir, char* out, std::size_t cap);

/// An environment for a program about to be exec'd: `envp` itself, unless
/// it holds a relative PARLOT_DIR; then a copy (in memory mapped for it, no
/// malloc) whose PARLOT_DIR is made absolute with absolute_trace_dir().
/// Unmapped when destroyed (after an exec that failed). Async-signal-safe.
class ExecEnvironment {
 public:
  explicit ExecEnvironment(char* const* envp);
  ~ExecEnvironment();
  ExecEnvironment(const ExecEnvironment&) = delete;
  ExecEnvironment& operator=(const ExecEnvironment&) = delete;
  /// The environment to pass on.
  char* const* get() const { return envp_; }

 private:
  char* const* envp_;
  void* mapped_ = nullptr;
  std::size_t mapped_bytes_ = 0;
};

}  // namespace parlot::runtime
