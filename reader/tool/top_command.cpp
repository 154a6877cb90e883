// parlot-read top: a running job's threads, refreshed every --interval
// seconds until the job ends or --iterations refreshes are printed: per
// rank (and thread, where a process has several) the call it is in now and
// for how long, and where its time went since the last refresh (the
// functions innermost over that window, by time). Files are read as they
// grow (LiveThread: only the new blocks each refresh). Nothing goes to
// stderr for a job that is simply running; damaged files go to the
// DamageLog like every view's.
#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "commands.h"
#include "function_names.h"
#include "live_thread.h"
#include "thread_walk.h"
#include "visible_text.h"

namespace parlot::tool {
namespace {

namespace fs = std::filesystem;

struct TopOptions {
  std::string dir;
  double interval = 1.0;         ///< seconds between refreshes
  std::uint64_t iterations = 0;  ///< refreshes to print (0: until the job ends)
  std::size_t top = 3;           ///< functions per thread and window
};

std::uint64_t monotonic_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(t.tv_nsec);
}

bool is_this_host(const std::string& host) {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 && host == name;
}

/// One process of the job, its threads read as they grow.
struct LiveProcess {
  std::unique_ptr<ProcessTrace> trace;
  std::unique_ptr<FunctionNames> names;
  std::string name;    ///< "rank R" or "process K"
  bool local = false;  ///< on this host: its clock is ours, its pid tells whether it runs
  bool running = true;
  std::map<fs::path, std::unique_ptr<LiveThread>> threads;
  std::map<fs::path, std::uint64_t> window_end;  ///< per thread: the end of its last window
  std::size_t thread_files = 0;                  ///< thread files in its directory when last opened
  bool failed = false;                           ///< its directory could not be opened
};

/// Whether the process `m` describes may still be writing its trace: no
/// end time and, on this host, its pid alive (elsewhere it cannot be told:
/// taken as running until its end time appears).
bool still_running(const ProcessMetadata& m) {
  if (m.end_ns != 0) return false;
  if (!is_this_host(m.host)) return true;
  return m.pid > 0 && m.pid <= 0x7fffffff &&
         (::kill(static_cast<pid_t>(m.pid), 0) == 0 || errno == EPERM);
}

std::size_t count_thread_files(const fs::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with("thread-") && name.ends_with(".trace")) ++n;
  }
  return n;
}

std::string seconds(std::uint64_t ns) {
  return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
}

class Top {
 public:
  explicit Top(TopOptions o) : o_(std::move(o)) {}

  /// Refreshes and prints until the job ends or the iterations are done.
  void run() {
    const bool tty = ::isatty(STDOUT_FILENO) == 1;
    for (std::uint64_t n = 1;; ++n) {
      const bool ended = refresh_processes();
      const std::string block = render(n);
      fmt::print("{}{}", tty ? "\x1b[H\x1b[2J" : (n > 1 ? "\n" : ""), block);
      std::fflush(stdout);
      if (ended || (o_.iterations != 0 && n >= o_.iterations)) return;
      std::this_thread::sleep_for(std::chrono::duration<double>(o_.interval));
    }
  }

 private:
  /// Lists the directory, opens new processes and new thread files, reads
  /// what every thread file gained. Returns true when the job has ended
  /// (every process listed has finished or is gone, as seen before reading,
  /// so this refresh reads their last data).
  bool refresh_processes() {
    std::vector<ProcessListing> listing;
    try {
      listing = list_trace_directory(o_.dir);
    } catch (const FormatError&) {
      if (!fs::is_directory(o_.dir)) throw;
      return false;  // no process directory yet: the job is starting
    }
    bool ranked = false;
    for (const auto& l : listing) ranked = ranked || !l.metadata.rank.empty();
    bool ended = !listing.empty();
    now_ = monotonic_ns();
    for (std::size_t i = 0; i < listing.size(); ++i) {
      auto& p = processes_[listing[i].directory];
      p.name =
          ranked ? "rank " + visible_text(listing[i].metadata.rank) : fmt::format("process {}", i);
      p.running = still_running(listing[i].metadata);
      p.local = is_this_host(listing[i].metadata.host);
      ended = ended && !p.running;
      order_.resize(listing.size());
      order_[i] = listing[i].directory;
      const std::size_t files = count_thread_files(listing[i].directory);
      if (!p.trace || files != p.thread_files || !p.running) reopen(p, listing[i]);
      p.thread_files = files;
      read_threads(p);
    }
    return ended;
  }

  /// (Re)opens a process directory: its function table and thread files as
  /// they are now; names are looked up again.
  void reopen(LiveProcess& p, const ProcessListing& listed) {
    auto trace = std::make_unique<ProcessTrace>();
    try {
      *trace = open_process_directory(listed, true);
    } catch (const FormatError& e) {
      if (!p.trace) p.failed = true;
      return;
    }
    p.names.reset();
    p.trace = std::move(trace);
    p.names = std::make_unique<FunctionNames>(*p.trace);
    p.failed = false;
    for (const auto& file : p.trace->thread_files) {
      if (p.threads.contains(file)) continue;
      try {
        p.threads.emplace(file, std::make_unique<LiveThread>(file));
      } catch (const FormatError&) {
        // A file whose header is not written yet: tried again next time.
      }
    }
  }

  void read_threads(LiveProcess& p) {
    for (auto it = p.threads.begin(); it != p.threads.end();) {
      LiveThread& t = *it->second;
      std::uint64_t& begin = p.window_end[it->first];
      try {
        // A local running process: up to now. Otherwise up to what its
        // file records (its clock may not be ours).
        t.refresh();
        const std::uint64_t end =
            p.local && p.running && t.timed() ? std::max(now_, t.horizon()) : t.horizon();
        t.update(begin, end);
        window_begin_[it->first] = begin;
        begin = end;
        ++it;
      } catch (const FormatError& e) {
        report_error(e);
        p.window_end.erase(it->first);
        it = p.threads.erase(it);
      }
    }
  }

  /// Name of function `id` of `p`, the function table read again when the
  /// ID is beyond it (a function first called since).
  std::string name_of(LiveProcess& p, std::uint32_t id) {
    if (id > p.trace->function_addresses.size() && !reloaded_.contains(&p)) {
      reloaded_.insert(&p);
      try {
        auto trace = std::make_unique<ProcessTrace>(
            open_process_directory({p.trace->directory, p.trace->metadata}, true));
        p.names.reset();
        p.trace = std::move(trace);
        p.names = std::make_unique<FunctionNames>(*p.trace);
      } catch (const FormatError&) {
      }
    }
    return visible_text(p.names->lookup(id).function);
  }

  std::string render(std::uint64_t n) {
    reloaded_.clear();
    std::size_t running = 0;
    for (const auto& dir : order_) running += processes_[dir].running;
    std::string out = fmt::format("parlot-read top {}: refresh {}; {} process{}, {} running\n",
                                  visible_text(o_.dir), n, order_.size(),
                                  order_.size() == 1 ? "" : "es", running);
    if (order_.empty()) out += "  no traced process yet\n";
    for (const auto& dir : order_) {
      LiveProcess& p = processes_[dir];
      if (p.failed || !p.trace) {
        out += fmt::format("{}: not readable yet\n", p.name);
        continue;
      }
      for (auto& [file, thread] : p.threads) {
        const std::string label =
            p.threads.size() > 1 ? fmt::format("{} thread {}", p.name, thread->index()) : p.name;
        out += thread_lines(p, file, *thread, label);
      }
    }
    return out;
  }

  std::string thread_lines(LiveProcess& p, const fs::path& file, LiveThread& t,
                           const std::string& label) {
    const bool timed = t.timed();
    auto amount = [&](std::uint64_t v) { return timed ? seconds(v) : fmt::format("{} events", v); };
    std::string out;
    const auto& open = t.open();
    if (open.empty()) {
      out += fmt::format("{}: {}\n", label,
                         t.finished() ? fmt::format("finished ({} events)", t.events())
                                      : std::string("not in a call"));
    } else {
      const LiveThread::Frame& f = open.back();
      const std::uint64_t until =
          p.local && p.running && timed ? std::max(now_, t.horizon()) : t.horizon();
      std::string path;
      const std::size_t first = open.size() > 4 ? open.size() - 4 : 0;
      if (first > 0) path = "... > ";
      for (std::size_t i = first; i < open.size(); ++i) {
        path += name_of(p, open[i].function) + (i + 1 < open.size() ? " > " : "");
      }
      out += fmt::format("{}: in {} for {}{}  ({})\n", label, name_of(p, f.function),
                         amount(until > f.entered ? until - f.entered : 0),
                         p.running || !p.local ? "" : ", ended there", path);
    }
    // Where its time went in the window, the largest first.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> spent;
    std::uint64_t total = 0;
    for (const auto& [id, ns] : t.window()) {
      spent.emplace_back(ns, id);
      total += ns;
    }
    if (spent.empty()) return out;
    std::sort(spent.begin(), spent.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    const std::uint64_t begin = window_begin_[file];
    out += fmt::format("  {}:", begin == 0 ? "since it started" : "since the last refresh");
    for (std::size_t i = 0; i < spent.size() && i < o_.top; ++i) {
      out += fmt::format("{} {} {} ({:.0f}%)", i == 0 ? "" : ",", name_of(p, spent[i].second),
                         amount(spent[i].first),
                         100.0 * static_cast<double>(spent[i].first) / static_cast<double>(total));
    }
    out += "\n";
    return out;
  }

  TopOptions o_;
  std::map<fs::path, LiveProcess> processes_;
  std::vector<fs::path> order_;  ///< processes in listing order
  std::map<fs::path, std::uint64_t> window_begin_;
  std::set<const LiveProcess*> reloaded_;
  std::uint64_t now_ = 0;
};

}  // namespace

void add_top_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<TopOptions>();
  CLI::App* cmd = app.add_subcommand(
      "top",
      "A running job, refreshed: per rank and thread the call it is in and for how long, and "
      "where its time went since the last refresh");
  cmd->add_option("dir", options->dir, "Trace directory of the job")->required();
  cmd->add_option("--interval", options->interval, "Seconds between refreshes")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--iterations", options->iterations,
                  "Refreshes to print, then exit (0: until the job ends)")
      ->capture_default_str();
  cmd->add_option("--top", options->top, "Functions shown per thread and refresh")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}))
      ->capture_default_str();
  cmd->callback([options, &exit_status] {
    Top(*options).run();
    exit_status = 0;
  });
}

}  // namespace parlot::tool
