#include "child_process.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace parlot::frontend {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};

volatile sig_atomic_t g_child_pid = 0;

void forward_signal(int sig, siginfo_t* info, void*) {
  // Terminal signals (si_code SI_KERNEL) went to the whole foreground
  // process group, the child included.
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  if (g_child_pid > 0) kill(g_child_pid, sig);
}

}  // namespace

ChildEnd run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);
  // This process's own writes to a pipe whose reader is gone (the summary
  // into `| head -1`) fail with EPIPE instead of killing it; the child
  // gets back the disposition this process was given.
  struct sigaction ignore {
  }, given{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &given);
  const pid_t pid = fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    sigaction(SIGPIPE, &given, nullptr);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    execvp(args[0], args.data());
    const int err = errno;
    std::fprintf(stderr, "parlot: cannot run '%s': %s\n", args[0], std::strerror(err));
    _exit(err == ENOENT ? 127 : 126);
  }
  g_child_pid = pid;
  struct sigaction sa {};
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (const int sig : kForwarded) sigaction(sig, &sa, nullptr);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
  }
  g_child_pid = 0;
  ChildEnd end;
  end.pid = pid;
  if (WIFSIGNALED(status)) {
    end.signal = WTERMSIG(status);
    end.exit_status = 128 + end.signal;
  } else {
    end.exit_status = WEXITSTATUS(status);
  }
  return end;
}

void end_like(const ChildEnd& child) {
  std::fflush(nullptr);
  if (child.signal != 0) {
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    std::signal(child.signal, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, child.signal);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(child.signal);
  }
  std::exit(child.exit_status);
}

}  // namespace parlot::frontend
