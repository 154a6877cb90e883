#include "record_command.h"

#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "child_process.h"
#include "install_paths.h"
#include "mpi_detection.h"
#include "trace_summary.h"

namespace parlot::frontend {
namespace {

struct RecordOptions {
  std::string dir;
  bool no_compress = false;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::size_t max_depth = 0;
  bool libcalls = false;
  bool mpi = false;
  bool quiet = false;
  std::string layout;  // --layout: "node", "process" or "" (the runtime's default)
  std::string flight;  // --flight[=SIZE]: SIZE, "" for the default
  CLI::Option* flight_option = nullptr;
};

// KiB of a --flight SIZE: a whole number, KiB unless followed by K, M or G
// (KiB, MiB, GiB). Exits with status 2 on anything else.
std::size_t flight_kib(const std::string& size) {
  std::size_t end = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(size, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  std::string unit = size.substr(end);
  unsigned long long scale = 1;
  if (unit == "M" || unit == "m") scale = 1024;
  if (unit == "G" || unit == "g") scale = 1024 * 1024;
  if (end == 0 || !(unit.empty() || unit == "K" || unit == "k" || scale != 1)) {
    fmt::print(stderr, "parlot record: --flight={}: expected a size such as 256K or 1M\n", size);
    std::exit(2);
  }
  return static_cast<std::size_t>(n * scale);
}

// PARLOT_INCLUDE / PARLOT_EXCLUDE hold patterns separated by ';'.
std::string join_patterns(const std::vector<std::string>& patterns) {
  std::string s;
  for (const auto& p : patterns) s += (s.empty() ? "" : ";") + p;
  return s;
}

// Prints where the trace went and what it holds, on stderr. A summary that
// cannot be written (stderr closed, or a pipe whose reader is gone: EPIPE,
// SIGPIPE being ignored) is dropped: the exit status stays the program's.
void print_summary(const std::filesystem::path& trace_dir, const std::set<std::string>& before,
                   const ChildEnd& end) {
  try {
    const TraceSummary s = summarize_recording(trace_dir, before, static_cast<unsigned>(end.pid));
    if (s.process_dirs.empty()) {
      fmt::print(stderr, "parlot: no trace in {} (did the program run instrumented code?)\n",
                 trace_dir.string());
    } else {
      fmt::print(stderr, "parlot: trace in {}{}\n", trace_dir.string(),
                 s.process_dirs.size() == 1
                     ? " (" + s.process_dirs.front().filename().string() + ")"
                     : std::string());
      fmt::print(stderr, "parlot: {}\n", describe(s));
    }
  } catch (const std::exception& e) {
    try {
      fmt::print(stderr, "parlot: no summary: {}\n", e.what());
    } catch (const std::exception&) {
    }
  }
}

// The flight-<n> directories of a trace directory.
std::set<std::string> flight_dump_names(const std::filesystem::path& trace_dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(trace_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("flight-") && e.is_directory()) names.insert(name);
  }
  return names;
}

// The flight recorder's summary: the dumps the run made, on stderr.
void print_flight_summary(const std::filesystem::path& trace_dir,
                          const std::set<std::string>& before) {
  std::string made;
  std::size_t n = 0;
  for (const auto& name : flight_dump_names(trace_dir)) {
    if (before.count(name) != 0) continue;
    made += " " + name;
    ++n;
  }
  try {
    fmt::print(stderr, "parlot: flight recorder: {} dump{} in {}{}\n", n, n == 1 ? "" : "s",
               trace_dir.string(), made.empty() ? std::string() : ":" + made);
  } catch (const std::exception&) {
  }
}

[[noreturn]] void run_record(const RecordOptions& o, const std::vector<std::string>& command) {
  if (command.empty()) {
    fmt::print(stderr,
               "parlot record: no program given (parlot record [options] -- PROGRAM ARGS)\n");
    std::exit(2);
  }
  const auto runtime = find_runtime();
  if (!runtime) {
    fmt::print(stderr,
               "parlot record: cannot find the runtime {} next to {} (set PARLOT_RUNTIME)\n",
               PARLOT_RUNTIME_NAME, own_directory().string());
    std::exit(2);
  }
  std::string dir = o.dir;
  if (dir.empty()) {
    const char* d = std::getenv("PARLOT_DIR");
    dir = d != nullptr && *d != '\0' ? d : "parlot.data";
  }
  // Absolute, so the program (or what it starts) may change directory.
  const std::filesystem::path trace_dir = std::filesystem::absolute(dir).lexically_normal();

  std::vector<std::string> env;
  std::string preload = runtime->string();
  // Every MPI call in the trace, in a program that loads an MPI library
  // (or with --mpi): anywhere else the wrappers would be MPI functions that
  // untraced do not exist.
  if (const auto mpi = find_mpi_wrappers(*runtime)) {
    const auto program = find_program(command.front());
    if (o.mpi || (program && program_loads_mpi(*program))) preload += ":" + mpi->string();
  }
  if (const char* p = std::getenv("LD_PRELOAD"); p != nullptr && *p != '\0') {
    preload += std::string(":") + p;
  }
  env.push_back("LD_PRELOAD=" + preload);
  env.push_back("PARLOT_DIR=" + trace_dir.string());
  if (o.no_compress) env.push_back("PARLOT_COMPRESS=0");
  if (!o.include.empty()) env.push_back("PARLOT_INCLUDE=" + join_patterns(o.include));
  if (o.libcalls) env.push_back("PARLOT_LIBCALLS=1");
  if (!o.exclude.empty()) env.push_back("PARLOT_EXCLUDE=" + join_patterns(o.exclude));
  if (o.max_depth != 0) env.push_back(fmt::format("PARLOT_MAX_DEPTH={}", o.max_depth));
  if (!o.layout.empty()) env.push_back("PARLOT_LAYOUT=" + o.layout);
  const bool flight = o.flight_option != nullptr && o.flight_option->count() != 0;
  if (flight) {
    env.push_back("PARLOT_MODE=flight");
    if (!o.flight.empty()) env.push_back(fmt::format("PARLOT_FLIGHT_KB={}", flight_kib(o.flight)));
  }

  const auto before = process_dir_names(trace_dir);
  const auto dumps_before = flight_dump_names(trace_dir);
  const ChildEnd end = run_child(command, env);
  if (!o.quiet && flight) {
    print_flight_summary(trace_dir, dumps_before);
  } else if (!o.quiet) {
    print_summary(trace_dir, before, end);
  }
  end_like(end);
}

}  // namespace

void add_record_command(CLI::App& app, const std::vector<std::string>& command) {
  auto o = std::make_shared<RecordOptions>();
  CLI::App* cmd = app.add_subcommand(
      "record", "Run PROGRAM under the Parlot runtime and record every call of every thread");
  cmd->add_option("-d,--dir", o->dir, "Trace directory (default $PARLOT_DIR or ./parlot.data)");
  cmd->add_flag("--no-compress", o->no_compress, "Write the uncompressed word stream (ParLoT-NC)");
  cmd->add_option("--include", o->include,
                  "Record only functions matching PATTERN (repeatable; PARLOT_INCLUDE)")
      ->type_name("PATTERN")
      ->allow_extra_args(false);
  cmd->add_option("--exclude", o->exclude,
                  "Do not record functions matching PATTERN (repeatable; PARLOT_EXCLUDE)")
      ->type_name("PATTERN")
      ->allow_extra_args(false);
  cmd->add_option("--max-depth", o->max_depth, "Record calls up to this depth (PARLOT_MAX_DEPTH)");
  cmd->add_flag("--libcalls", o->libcalls,
                "Record calls into uninstrumented shared libraries (PARLOT_LIBCALLS=1)");
  cmd->add_flag("--mpi", o->mpi,
                "Preload the MPI wrappers even if PROGRAM links no MPI library (it starts MPI "
                "programs, or loads MPI with dlopen)");
  o->flight_option =
      cmd->add_option("--flight", o->flight,
                      "Flight recorder: keep each thread's latest events in memory (SIZE per "
                      "thread, default 1M) and write them on a crash, exit, the flight signal "
                      "or parlot_flight_dump() (PARLOT_MODE=flight, PARLOT_FLIGHT_KB)")
          ->expected(0, 1)
          ->type_name("SIZE");
  cmd->add_option("--layout", o->layout,
                  "Files of the trace: 'node' (one file per node, the default under an MPI "
                  "launcher) or 'process' (a directory per process) (PARLOT_LAYOUT)")
      ->check(CLI::IsMember({"node", "process"}))
      ->type_name("LAYOUT");
  cmd->add_flag("-q,--quiet", o->quiet, "Print no summary");
  cmd->callback([o, command] { run_record(*o, command); });
}

std::vector<std::string> split_program_command(int& argc, char** argv) {
  // argv[1] is "record". Options taking a value: skip the value too.
  const auto takes_value = [](std::string_view a) {
    return a == "-d" || a == "--dir" || a == "--include" || a == "--exclude" ||
           a == "--max-depth" || a == "--layout";
  };
  int i = 2;
  while (i < argc) {
    const std::string_view a = argv[i];
    if (a == "--") {
      argc = i;
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-') {
      argc = i;
      break;
    }
    i += takes_value(a) ? 2 : 1;
  }
  std::vector<std::string> command;
  for (int k = i; argv[k] != nullptr; ++k) command.emplace_back(argv[k]);
  return command;
}

}  // namespace parlot::frontend
