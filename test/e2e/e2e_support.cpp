#include "e2e_support.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace parlot::e2e {
namespace fs = std::filesystem;

namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (const char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

}  // namespace

pid_t spawn(const std::vector<std::string>& argv, const fs::path& out) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool have(const std::string& program) {
  return run({"/bin/sh", "-c", "command -v " + program}).exit_status == 0;
}

RunResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  TempDir io;
  std::string cmd = "env";
  for (const auto& e : env) cmd += " " + quote(e);
  cmd += " timeout 120";
  for (const auto& a : argv) cmd += " " + quote(a);
  cmd += " >" + quote((io.path() / "out").string()) + " 2>" + quote((io.path() / "err").string());
  const int status = std::system(cmd.c_str());
  RunResult r;
  if (WIFEXITED(status)) {
    r.exit_status = WEXITSTATUS(status);
    // A child killed by a signal shows through the shell as 128 + signal.
    if (r.exit_status > 128 && r.exit_status < 128 + 65) {
      r.signal = r.exit_status - 128;
      r.exit_status = -1;
    }
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  r.out = slurp(io.path() / "out");
  r.err = slurp(io.path() / "err");
  return r;
}

RunResult run_traced(const std::vector<std::string>& argv, const fs::path& trace_dir,
                     std::vector<std::string> env) {
  env.push_back(std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH);
  env.push_back("PARLOT_DIR=" + trace_dir.string());
  return run(argv, env);
}

RunResult parlot_read(const std::vector<std::string>& args) {
  std::vector<std::string> argv{PARLOT_READ_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  // The call trees these tests compare are without call sites.
  if (!args.empty() && (args[0] == "trace" || args[0] == "stacks")) {
    argv.insert(argv.begin() + 2, "--no-sites");
  }
  return run(argv);
}

RunResult parlot_read_with_sites(const std::vector<std::string>& args) {
  std::vector<std::string> argv{PARLOT_READ_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

std::vector<std::vector<std::uint32_t>> read_thread_events(const ProcessTrace& process) {
  std::vector<std::vector<std::uint32_t>> threads;
  for (const auto& f : process.thread_files) {
    ThreadEventReader r(f);
    std::vector<std::uint32_t> events;
    for (auto b = r.next_batch(); !b.empty(); b = r.next_batch()) {
      events.insert(events.end(), b.begin(), b.end());
    }
    threads.push_back(std::move(events));
  }
  return threads;
}

std::vector<std::string> split_threads(const std::string& text) {
  std::vector<std::string> threads;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("# thread ")) {
      threads.emplace_back();
    } else if (!line.starts_with("#") && !threads.empty()) {
      threads.back() += line + "\n";
    }
  }
  return threads;
}

std::vector<std::string> fixture_paths() {
  std::vector<std::string> paths;
  std::istringstream in(PARLOT_FIXTURES);
  std::string p;
  while (std::getline(in, p, ',')) paths.push_back(p);
  return paths;
}

std::string examples_dir() {
  return PARLOT_EXAMPLES_DIR;
}

std::string find_mpirun() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / "mpirun";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

}  // namespace parlot::e2e
