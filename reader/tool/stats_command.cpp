// parlot-read stats: calls per function and caller -> callee edges with
// counts, and the number of user marks, per thread, per process or for the
// whole program.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "commands.h"
#include "parallel.h"
#include "thread_walk.h"
#include "trace_input.h"
#include "visible_text.h"

namespace parlot::tool {
namespace {

struct StatsOptions {
  ViewOptions view;
  std::string by = "program";
};

// Counts keyed by name (as shown: visible_text), so processes (whose IDs
// differ) can be merged.
struct CallStats {
  std::map<std::string, std::uint64_t> calls;
  std::map<std::pair<std::string, std::string>, std::uint64_t> edges;
  std::uint64_t marks = 0;  ///< user marks (never filtered out)

  void merge(const CallStats& o) {
    marks += o.marks;
    for (const auto& [k, v] : o.calls) calls[k] += v;
    for (const auto& [k, v] : o.edges) edges[k] += v;
  }
};

// One thread's counts, by function ID of its process, then named. Runs on
// a worker thread: touches only its stream and const input.
CallStats thread_stats(ThreadStream& stream, const ProcessFunctions& functions,
                       const analysis::NameTable& names) {
  std::vector<std::uint64_t> dense(functions.key.size(), 0);
  std::unordered_map<std::uint32_t, std::uint64_t> sparse;  // IDs beyond the table
  std::unordered_map<std::uint64_t, std::uint64_t> edges;
  for (CallEvent e; stream.next_call(e);) {
    if (e.kind != CallEvent::Kind::kEnter) continue;
    if (e.function_id < dense.size()) {
      ++dense[e.function_id];
    } else {
      ++sparse[e.function_id];
    }
    ++edges[static_cast<std::uint64_t>(e.caller_id) << 32 | e.function_id];
  }
  auto name = [&](std::uint32_t id) {
    if (id == 0) return std::string("<thread>");
    if (id < functions.key.size()) return names.name(functions.key[id]);
    return visible_text(fmt::format("#{}", id));
  };
  CallStats s;
  s.marks = stream.summary().marks.size();
  for (std::uint32_t id = 1; id < dense.size(); ++id) {
    if (dense[id] != 0) s.calls[name(id)] += dense[id];
  }
  for (const auto& [id, n] : sparse) s.calls[name(id)] += n;
  for (const auto& [key, n] : edges) {
    s.edges[{name(static_cast<std::uint32_t>(key >> 32)), name(static_cast<std::uint32_t>(key))}] +=
        n;
  }
  return s;
}

void print_stats(const std::string& title, const CallStats& s) {
  fmt::print("== {} ==\n", title);
  std::vector<std::pair<std::uint64_t, std::string>> calls;
  for (const auto& [k, v] : s.calls) calls.emplace_back(v, k);
  std::stable_sort(calls.begin(), calls.end(), [](auto& a, auto& b) { return a.first > b.first; });
  fmt::print("{:>14}  {}\n", "calls", "function");
  for (const auto& [n, f] : calls) fmt::print("{:>14}  {}\n", n, f);
  std::vector<std::pair<std::uint64_t, std::pair<std::string, std::string>>> edges;
  for (const auto& [k, v] : s.edges) edges.emplace_back(v, k);
  std::stable_sort(edges.begin(), edges.end(), [](auto& a, auto& b) { return a.first > b.first; });
  fmt::print("{:>14}  {}\n", "calls", "caller -> callee");
  for (const auto& [n, e] : edges) {
    fmt::print("{:>14}  {} -> {}\n", n, e.first, e.second);
  }
  fmt::print("{:>14}  marks\n\n", s.marks);
}

int run_stats(const StatsOptions& o) {
  TraceInput input(o.view);
  const auto& threads = input.threads();
  struct ThreadResult {
    CallStats stats;
    std::uint64_t tid = 0;
  };
  std::vector<ThreadResult> results(threads.size());
  parallel_for(threads.size(), input.jobs(), [&](std::size_t i) {
    auto stream = input.open(threads[i]);
    results[i].stats = thread_stats(*stream, input.functions(threads[i].process), input.names());
    results[i].tid = stream->summary().tid;
    input.finished(*stream);
  });
  CallStats program, whole_process;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const ProcessTrace& process = input.processes()[threads[i].process];
    if (o.by == "thread") {
      print_stats(fmt::format("thread {} (pid {}, thread #{})", results[i].tid,
                              process.metadata.pid, threads[i].id.thread),
                  results[i].stats);
    }
    whole_process.merge(results[i].stats);
    if (i + 1 == threads.size() || threads[i + 1].process != threads[i].process) {
      if (o.by == "process") {
        const auto& m = process.metadata;
        print_stats(fmt::format("process {}{} {}", m.pid,
                                m.rank.empty() ? "" : " rank " + visible_text(m.rank),
                                visible_text(m.executable)),
                    whole_process);
      }
      program.merge(whole_process);
      whole_process = {};
    }
  }
  if (o.by == "program") print_stats("program", program);
  return input.status();
}

}  // namespace

void add_stats_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<StatsOptions>();
  CLI::App* cmd =
      app.add_subcommand("stats", "Call counts per function and caller -> callee edges");
  cmd->add_option("dir", options->view.dir, "Trace directory")->required();
  add_view_options(cmd, options->view);
  cmd->add_option("--by", options->by, "Aggregate per thread, process or program")
      ->check(CLI::IsMember({"thread", "process", "program"}));
  cmd->callback([options, &exit_status] { exit_status = run_stats(*options); });
}

}  // namespace parlot::tool
