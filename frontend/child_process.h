// Runs the recorded program as a child process, forwards the signals sent
// to the front end, and hands back how the child ended.
#pragma once

#include <string>
#include <vector>

namespace parlot::frontend {

/// How a child process ended.
struct ChildEnd {
  int pid = 0;          ///< the child's process ID
  int exit_status = 0;  ///< exit code when it exited (127: not found, 126: not executable)
  int signal = 0;       ///< the signal that killed it, or 0
};

/// Runs `argv` (argv[0] searched in PATH) with `env` ("NAME=value" entries
/// replacing or adding to the environment) and waits for it. While it runs,
/// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM sent to
/// this process by kill(2) (an MPI launcher, a batch system, a user) are
/// forwarded to the child; the same signals from the terminal already reach
/// the child, which shares the process group, and are not sent twice.
/// From the call on this process ignores SIGPIPE (its own writes to a pipe
/// whose reader has gone fail with EPIPE); the child starts with the
/// SIGPIPE disposition this process had. Throws std::system_error when
/// fork fails.
ChildEnd run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env);

/// Ends this process the way the child ended: exit with its status, or die
/// of its signal (no core file for this process). Never returns.
[[noreturn]] void end_like(const ChildEnd& child);

}  // namespace parlot::frontend
