#include "mpi_detection.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <string_view>
#include <vector>

#include "elf_probe.h"

extern char** environ;

namespace parlot::frontend {
namespace {

bool is_executable_file(const std::filesystem::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// Runs `argv` with this environment, stdin and stderr on /dev/null, and
// returns what it wrote on stdout (empty when it could not be started).
std::string output_of(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  std::string out;
  if (rc == 0) {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
      if (n > 0) {
        out.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(pipe_fds[0]);
  return out;
}

// The absolute paths of the objects in the dynamic loader's list: lines
// "\tNAME => PATH (0xADDRESS)" or "\tPATH (0xADDRESS)"; "not found" and
// the vDSO (no path) are left out.
std::vector<std::filesystem::path> listed_objects(const std::string& listing) {
  std::vector<std::filesystem::path> paths;
  std::istringstream in(listing);
  for (std::string line; std::getline(in, line);) {
    std::string_view s = line;
    if (const auto arrow = s.find(" => "); arrow != std::string_view::npos) {
      s.remove_prefix(arrow + 4);
    }
    while (!s.empty() && (s.front() == '\t' || s.front() == ' ')) s.remove_prefix(1);
    if (const auto address = s.rfind(" ("); address != std::string_view::npos) {
      s = s.substr(0, address);
    }
    if (!s.empty() && s.front() == '/') paths.emplace_back(s);
  }
  return paths;
}

}  // namespace

std::optional<std::filesystem::path> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    return is_executable_file(name) ? std::optional<std::filesystem::path>(name) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/bin:/usr/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

bool program_loads_mpi(const std::filesystem::path& program) {
  const auto loader = elf_interpreter(program);
  if (!loader || !is_executable_file(*loader)) return false;
  const std::string listing = output_of({*loader, "--list", program.string()});
  for (const auto& object : listed_objects(listing)) {
    if (elf_defines_dynamic_symbol(object, "PMPI_Init")) return true;
  }
  return false;
}

}  // namespace parlot::frontend
