#include "hardening_support.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "parlot/call_stack_tracker.h"
#include "parlot/symbolizer.h"

extern char** environ;

namespace parlot::hardening {
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  TempDir io;
  const std::string out = (io.path() / "out").string();
  const std::string err = (io.path() / "err").string();
  // Everything the child needs is built before fork.
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    const std::string name = kv.substr(0, kv.find('='));
    if (name == "LD_PRELOAD" || name.starts_with("PARLOT_")) continue;
    vars[name] = kv;
  }
  for (const auto& kv : options.env) vars[kv.substr(0, kv.find('='))] = kv;
  std::vector<std::string> env_strings;
  for (auto& [name, kv] : vars) env_strings.push_back(kv);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    setpgid(0, 0);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    const int in_fd = open("/dev/null", O_RDONLY);
    const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in_fd < 0 || out_fd < 0 || err_fd < 0) _exit(126);
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    // The test's own descriptors stay out of the child (and of the flock
    // semantics the daemon test relies on).
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    signal(SIGPIPE, SIG_DFL);
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(126);
    execve(argp[0], argp.data(), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);
  RunResult r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_s);
  int status = 0;
  for (;;) {
    const pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status)) {
    r.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  if (options.after_exit) options.after_exit(pid);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

RunResult run_traced(const std::vector<std::string>& argv, const fs::path& trace_dir,
                     RunOptions options) {
  options.env.push_back(std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH);
  options.env.push_back("PARLOT_DIR=" + trace_dir.string());
  return run(argv, options);
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

std::string program(const std::string& name, const std::string& variant) {
  return std::string(PARLOT_HARDENING_BIN_DIR) + "/" + name + "_" + variant;
}

std::string plugin_library(const std::string& variant) {
  return std::string(PARLOT_HARDENING_BIN_DIR) + "/libplugin_" + variant + ".so";
}

std::vector<std::string> variants() {
  std::vector<std::string> v;
  std::istringstream in(PARLOT_HARDENING_VARIANTS);
  for (std::string s; std::getline(in, s, ',');) v.push_back(s);
  return v;
}

std::vector<ThreadText> split_threads(const std::string& text) {
  std::vector<ThreadText> threads;
  std::istringstream in(text);
  std::string line, executable;
  std::size_t process = 0;
  bool seen_process = false;
  while (std::getline(in, line)) {
    if (line.starts_with("# process ")) {
      if (seen_process) ++process;
      seen_process = true;
      const auto space = line.find(' ', 10);
      executable = space == std::string::npos ? "" : line.substr(space + 1);
    } else if (line.starts_with("# thread ")) {
      ThreadText t;
      t.process = process;
      t.executable = executable;
      unsigned long long tid = 0, pid = 0, index = 0;
      std::sscanf(line.c_str(), "# thread %llu (pid %llu, thread #%llu)", &tid, &pid, &index);
      t.tid = tid;
      t.pid = pid;
      t.index = index;
      threads.push_back(std::move(t));
    } else if (!line.starts_with("#") && !threads.empty()) {
      threads.back().body += line + "\n";
    }
  }
  return threads;
}

namespace {

std::string display(std::string name) {
  return name.find('(') == std::string::npos ? name + "()" : name;
}

}  // namespace

void PrintTo(const Event& e, std::ostream* os) {
  *os << (e.enter ? "enter " : "exit ") << e.name;
}

Events tree(std::string_view spec) {
  Events events;
  std::vector<std::string> open;
  std::size_t i = 0;
  auto is_name_char = [](char c) {
    return c != '{' && c != '}' && c != ' ' && c != '\n' && c != '\t';
  };
  while (i < spec.size()) {
    const char c = spec[i];
    if (c == ' ' || c == '\n' || c == '\t') {
      ++i;
    } else if (c == '}') {
      if (open.empty()) throw std::invalid_argument("tree: unbalanced '}'");
      events.push_back({false, open.back()});
      open.pop_back();
      ++i;
    } else if (c == '{') {
      throw std::invalid_argument("tree: '{' without a name");
    } else {
      std::size_t j = i;
      while (j < spec.size() && is_name_char(spec[j])) ++j;
      const std::string name = display(std::string(spec.substr(i, j - i)));
      events.push_back({true, name});
      if (j < spec.size() && spec[j] == '{') {
        open.push_back(name);
        ++j;
      } else {
        events.push_back({false, name});
      }
      i = j;
    }
  }
  if (!open.empty()) throw std::invalid_argument("tree: unbalanced '{'");
  return events;
}

std::string tree_text(std::string_view spec) {
  return render(tree(spec));
}

std::string render(const Events& events) {
  std::string out;
  std::size_t depth = 0;
  auto indent = [&](std::size_t d) { out.append(2 * d, ' '); };
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.enter) {
      if (i + 1 < events.size() && !events[i + 1].enter) {
        indent(depth);
        out += e.name + ";\n";
        ++i;  // its exit
      } else {
        indent(depth);
        out += e.name + " {\n";
        ++depth;
      }
    } else {
      if (depth > 0) --depth;
      indent(depth);
      out += "} /* " + e.name + " */\n";
    }
  }
  return out;
}

Events parse_text(const std::string& body) {
  Events events;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    const std::string s = line.substr(first);
    if (s.starts_with("} /* ") && s.ends_with(" */")) {
      events.push_back({false, s.substr(5, s.size() - 8)});
    } else if (s.ends_with(" {")) {
      events.push_back({true, s.substr(0, s.size() - 2)});
    } else if (s.ends_with(";")) {
      const std::string name = s.substr(0, s.size() - 1);
      events.push_back({true, name});
      events.push_back({false, name});
    } else {
      throw std::invalid_argument("parse_text: unexpected line '" + line + "'");
    }
  }
  return events;
}

Events strip_frames(const Events& events, const std::function<bool(const std::string&)>& drop) {
  Events out;
  std::vector<bool> dropped;  // per open frame
  for (const Event& e : events) {
    if (e.enter) {
      const bool d = drop(e.name);
      dropped.push_back(d);
      if (!d) out.push_back(e);
    } else {
      const bool d = !dropped.empty() && dropped.back();
      if (!dropped.empty()) dropped.pop_back();
      if (!d) out.push_back(e);
    }
  }
  return out;
}

std::size_t remove_subtrees(Events& events, const std::string& name) {
  Events out;
  std::size_t removed = 0, skip_depth = 0;
  for (const Event& e : events) {
    if (skip_depth > 0) {
      skip_depth += e.enter ? 1 : -1;
      continue;
    }
    if (e.enter && e.name == name) {
      ++removed;
      skip_depth = 1;
      continue;
    }
    out.push_back(e);
  }
  events = std::move(out);
  return removed;
}

std::vector<Events> named_events(const ProcessTrace& process) {
  Symbolizer symbolizer(process.load_map, [](const std::string&) {});
  std::vector<std::string> names(process.function_addresses.size() + 1);
  for (std::size_t id = 1; id < names.size(); ++id) {
    names[id] = display(symbolizer.resolve(process.function_addresses[id - 1]).function);
  }
  std::vector<Events> threads;
  for (const auto& file : process.thread_files) {
    ThreadEventReader reader(file);
    CallStackTracker tracker(process.function_addresses.size(), file);
    Events events;
    for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
      for (const std::uint32_t id : b) {
        const CallEvent e = tracker.push(id);
        events.push_back({e.kind == CallEvent::Kind::kEnter,
                          e.function_id < names.size() ? names[e.function_id]
                                                       : "#" + std::to_string(e.function_id)});
      }
    }
    threads.push_back(std::move(events));
  }
  return threads;
}

::testing::AssertionResult is_prefix_of_tree(const std::string& body, const std::string& expected) {
  std::vector<std::string> got, want;
  std::istringstream g(body), w(expected);
  for (std::string l; std::getline(g, l);) got.push_back(l);
  for (std::string l; std::getline(w, l);) want.push_back(l);
  if (got.size() > want.size()) {
    return ::testing::AssertionFailure() << "more lines than the complete tree:\n"
                                         << body << "expected (complete):\n"
                                         << expected;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i]) continue;
    const bool last = i + 1 == got.size();
    if (last && want[i].ends_with(";") && got[i] == want[i].substr(0, want[i].size() - 1) + " {") {
      continue;
    }
    return ::testing::AssertionFailure()
           << "line " << i + 1 << " is '" << got[i] << "', expected '" << want[i] << "'; got:\n"
           << body << "expected (complete):\n"
           << expected;
  }
  return ::testing::AssertionSuccess();
}

std::vector<OracleLines> oracle_threads(const std::vector<std::string>& argv, RunOptions options) {
  TempDir where;
  options.env.push_back(std::string("LD_PRELOAD=") + PARLOT_ORACLE_PATH);
  options.env.push_back("PARLOT_ORACLE_DIR=" + where.path().string());
  run(argv, options);
  std::vector<OracleLines> threads;
  for (const auto& f : fs::directory_iterator(where.path())) {
    std::ifstream in(f.path());
    OracleLines lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    if (!lines.empty()) threads.push_back(std::move(lines));
  }
  std::sort(threads.begin(), threads.end());
  return threads;
}

std::vector<OracleLines> parlot_threads_as_oracle(const fs::path& dir) {
  std::vector<OracleLines> threads;
  for (const auto& process : open_trace_directory(dir)) {
    for (const auto& file : process.thread_files) {
      ThreadEventReader reader(file);
      OracleLines lines;
      for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
        for (const std::uint32_t id : b) {
          if (id == 0) {
            lines.push_back("X");
            continue;
          }
          const std::uint64_t address = process.function_addresses.at(id - 1);
          std::string where = "?";
          for (const auto& o : process.load_map) {
            if (!o.contains(address)) continue;
            char buf[64];
            std::snprintf(buf, sizeof buf, "+%lx",
                          static_cast<unsigned long>(address - o.load_bias));
            where = fs::path(o.path).filename().string() + buf;
            break;
          }
          lines.push_back("E " + where);
        }
      }
      threads.push_back(std::move(lines));
    }
  }
  std::sort(threads.begin(), threads.end());
  return threads;
}

}  // namespace parlot::hardening
