// parlot-read stats: calls per function and caller -> callee edges with
// counts, and the number of user marks, per thread, per process or for the
// whole program. Under mpirun the ranks split the process directories and
// rank 0 adds up their counts (keyed by function name, so exact).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "analysis/call_counts.h"
#include "analysis/partial_results.h"
#include "commands.h"
#include "parallel.h"
#include "reader_team.h"
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
using CallStats = analysis::NamedCallStats;

// One thread's counts, by function ID of its process (analysis::CallCounts,
// a batch of call events at a time), then named. Runs on a worker thread:
// touches only its stream and const input.
CallStats thread_stats(ThreadStream& stream, const ProcessFunctions& functions,
                       const analysis::NameTable& names) {
  analysis::CallCounts counts(functions.key.size());
  stream.for_each_entry(
      [&counts](std::uint32_t caller, std::uint32_t callee) { counts.add(caller, callee); });
  // Names of the IDs seen, each made once.
  std::unordered_map<std::uint32_t, std::string> named;
  auto name = [&](std::uint32_t id) -> const std::string& {
    auto [it, fresh] = named.try_emplace(id);
    if (fresh) {
      if (id == 0) {
        it->second = "<thread>";
      } else if (id < functions.key.size()) {
        it->second = names.name(functions.key[id]);
      } else {
        it->second = visible_text(fmt::format("#{}", id));
      }
    }
    return it->second;
  };
  CallStats s;
  s.marks = stream.summary().marks.size();
  for (const auto& e : counts.edges()) {
    s.calls[name(e.callee)] += e.calls;
    s.edges[{name(e.caller), name(e.callee)}] += e.calls;
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

// What --by prints one table for: a thread (process index, its position in
// the process's thread list), a whole process (position 0) or the program
// (0, 0). Members send one CallStats per unit; units never span members
// except the program, whose partial sums the leader adds up.
struct Unit {
  std::uint64_t process = 0;
  std::uint64_t position = 0;
  auto operator<=>(const Unit&) const = default;
};

struct UnitStats {
  CallStats stats;
  std::uint64_t tid = 0;     ///< --by thread
  std::uint64_t thread = 0;  ///< --by thread: thread index
};

// One member's share: its threads' counts, merged per unit.
std::string stats_partial(TraceInput& input, const StatsOptions& o) {
  const auto& threads = input.threads();
  struct ThreadResult {
    CallStats stats;
    std::uint64_t tid = 0;
  };
  std::vector<ThreadResult> results(threads.size());
  std::vector<char> read(threads.size(), 0);  // 0: damaged, left out
  parallel_for(threads.size(), input.jobs(), [&](std::size_t i) {
    read[i] = input.read_thread(threads[i], [&](ThreadStream& stream) {
      results[i].stats = thread_stats(stream, input.functions(threads[i].process), input.names());
      results[i].tid = stream.summary().tid;
    });
  });
  std::map<Unit, UnitStats> units;
  std::uint64_t position = 0;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    position = i > 0 && threads[i - 1].process == threads[i].process ? position + 1 : 0;
    if (!read[i]) continue;
    Unit u;
    if (o.by != "program") u.process = threads[i].process;
    if (o.by == "thread") u.position = position;
    UnitStats& unit = units[u];
    unit.stats.merge(results[i].stats);
    unit.tid = results[i].tid;
    unit.thread = threads[i].id.thread;
  }
  analysis::StatsPartial out;
  out.status = input.status();
  for (auto& [u, unit] : units) {
    out.units.push_back({u.process, u.position, unit.tid, unit.thread, std::move(unit.stats)});
  }
  return analysis::write_stats_partial(out);
}

int run_stats(const StatsOptions& o) {
  ReaderTeam& team = ReaderTeam::get();
  std::optional<TraceInput> input;
  const auto partials = gather_partials(team, [&] {
    input.emplace(o.view, [&](std::size_t i, std::uint64_t) { return team.owns(i); });
    return stats_partial(*input, o);
  });
  if (!team.leader()) return 0;
  std::map<Unit, UnitStats> units;
  for (const auto& part : partials) {
    const analysis::StatsPartial p = analysis::read_stats_partial(part, input->processes().size());
    for (const auto& in : p.units) {
      UnitStats& unit = units[Unit{in.process, in.position}];
      unit.tid = in.tid;
      unit.thread = in.thread;
      unit.stats.merge(in.stats);
    }
  }
  if (o.by == "program") {
    print_stats("program", units.empty() ? CallStats{} : units.begin()->second.stats);
  }
  for (const auto& [u, unit] : units) {
    const auto& m = input->processes()[u.process].metadata;
    if (o.by == "thread") {
      print_stats(fmt::format("thread {} (pid {}, thread #{})", unit.tid, m.pid, unit.thread),
                  unit.stats);
    } else if (o.by == "process") {
      print_stats(fmt::format("process {}{} {}", m.pid,
                              m.rank.empty() ? "" : " rank " + visible_text(m.rank),
                              visible_text(m.executable)),
                  unit.stats);
    }
  }
  return 0;
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
