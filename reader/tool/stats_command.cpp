// parlot-read stats: calls per function and caller -> callee edges with
// counts, per thread, per process or for the whole program.
#include <fmt/core.h>

#include <optional>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "commands.h"
#include "function_names.h"
#include "thread_walk.h"
#include "trace_input.h"
#include "visible_text.h"

namespace parlot::tool {
namespace {

struct StatsOptions {
  ViewOptions view;
  std::string by = "program";
};

// Counts keyed by name, so processes (whose IDs differ) can be merged.
struct CallStats {
  std::map<std::string, std::uint64_t> calls;
  std::map<std::pair<std::string, std::string>, std::uint64_t> edges;

  void merge(const CallStats& o) {
    for (const auto& [k, v] : o.calls) calls[k] += v;
    for (const auto& [k, v] : o.edges) edges[k] += v;
  }
};

CallStats thread_stats(ThreadEventReader& reader, std::uint64_t function_count,
                       FunctionNames& names, analysis::FilterStage* filter) {
  std::unordered_map<std::uint32_t, std::uint64_t> calls;
  std::unordered_map<std::uint64_t, std::uint64_t> edges;
  walk_thread(
      reader, function_count,
      [&](const CallEvent& e) {
        if (e.kind != CallEvent::Kind::kEnter) return;
        ++calls[e.function_id];
        ++edges[static_cast<std::uint64_t>(e.caller_id) << 32 | e.function_id];
      },
      filter);
  CallStats s;
  auto name = [&](std::uint32_t id) {
    return id == 0 ? std::string("<thread>") : names.lookup(id).function;
  };
  for (const auto& [id, n] : calls) s.calls[name(id)] += n;
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
  for (const auto& [n, f] : calls) fmt::print("{:>14}  {}\n", n, visible_text(f));
  std::vector<std::pair<std::uint64_t, std::pair<std::string, std::string>>> edges;
  for (const auto& [k, v] : s.edges) edges.emplace_back(v, k);
  std::stable_sort(edges.begin(), edges.end(), [](auto& a, auto& b) { return a.first > b.first; });
  fmt::print("{:>14}  {}\n", "calls", "caller -> callee");
  for (const auto& [n, e] : edges) {
    fmt::print("{:>14}  {} -> {}\n", n, visible_text(e.first), visible_text(e.second));
  }
  fmt::print("\n");
}

int run_stats(const StatsOptions& o) {
  int status = 0;
  CallStats program;
  const analysis::FunctionMatcher matcher(o.view.filter);
  for (const auto& process : open_trace_directory(o.view.dir)) {
    if (!o.view.selection.selects(process)) continue;
    status |= report_warnings(process);
    FunctionNames names(process);
    std::optional<analysis::FilterStage> filter_template;
    if (!o.view.filter.keeps_everything()) {
      filter_template.emplace(keep_vector(process, names, matcher), o.view.filter.max_depth);
    }
    CallStats whole_process;
    for (const auto& file : process.thread_files) {
      ThreadEventReader reader(file);
      if (!o.view.selection.selects(reader.summary())) continue;
      std::optional<analysis::FilterStage> filter = filter_template;
      CallStats t = thread_stats(reader, process.function_addresses.size(), names,
                                 filter ? &*filter : nullptr);
      status |= report_damage(reader.summary());
      if (o.by == "thread") {
        print_stats(fmt::format("thread {} (pid {}, thread #{})", reader.summary().tid,
                                process.metadata.pid, reader.summary().thread_index),
                    t);
      }
      whole_process.merge(t);
    }
    if (o.by == "process") {
      const auto& m = process.metadata;
      print_stats(fmt::format("process {}{} {}", m.pid,
                              m.rank.empty() ? "" : " rank " + visible_text(m.rank),
                              visible_text(m.executable)),
                  whole_process);
    }
    program.merge(whole_process);
  }
  if (o.by == "program") print_stats("program", program);
  return status;
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
