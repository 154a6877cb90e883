// parlot-read iterations: the program's main iterations per rank (the
// outermost repeating loop, the intervals between parlot_mark calls, or the
// calls of --loop FUNCTION), the ones that stand out first with their cause
// on one line (the rank whose own work grew, the function the extra time
// went to, how long the others waited in MPI), then one line per iteration
// with min / median / max over the ranks (--format csv for plotting).
#include <fmt/format.h>

#include <set>

#include "commands.h"
#include "iteration_table.h"

namespace parlot::tool {

namespace {

struct IterationsOptions {
  std::string dir;
  Selection selection;
  std::string loop;
  std::string format = "text";
  std::size_t top = 5;
};

int run_iterations(const IterationsOptions& o) {
  const IterationRun run = read_iterations(o.dir, o.selection, o.loop);
  const auto& table = run.table;
  const auto& hows = run.hows;
  const auto rows = analysis::spread(table);
  const std::string unit = run.axis.logical() ? "events" : "ns";
  if (o.format == "csv") {
    fmt::print("iteration,units,min_{0},median_{0},max_{0},slowest\n", unit);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto& r = rows[k];
      if (r.units == 0) continue;
      fmt::print("{},{},{},{:.0f},{},\"{}\"\n", k, r.units, r.min, r.median, r.max,
                 table.units[r.slowest]);
    }
    return run.status;
  }
  fmt::print("# time axis: {}\n", run.axis.description);
  std::set<std::string> distinct;
  std::size_t with = 0;
  for (std::size_t u = 0; u < hows.size(); ++u) {
    if (hows[u].empty()) continue;
    distinct.insert(hows[u]);
    ++with;
  }
  if (with == 0) {
    fmt::print("no iterations found: no repeating loop and fewer than two marks{}\n",
               o.loop.empty() ? " (try --loop FUNCTION)" : "");
    return run.status;
  }
  std::string how;
  for (const auto& h : distinct) how += (how.empty() ? "" : "; ") + h;
  fmt::print("# {} of {} {} have iterations ({}); {} iterations at most\n", with,
             table.units.size(), run.ranked ? "ranks" : "threads", how, table.iterations());
  const auto standouts = analysis::find_standouts(table, run.names, o.top);
  fmt::print("# iterations that stand out (time: the slowest {}'s), largest excess first: {}\n",
             run.ranked ? "rank" : "thread", standouts.size());
  for (const auto& s : standouts) {
    fmt::print("{}\n", standout_line(s, table, run.names, run.axis));
  }
  fmt::print("# per iteration, over the {}: {:>9} {:>12} {:>12} {:>12}  slowest\n",
             run.ranked ? "ranks" : "threads", "iteration", "min", "median", "max");
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto& r = rows[k];
    if (r.units == 0) continue;
    fmt::print("{:>9} {:>12} {:>12} {:>12}  {}\n", k,
               format_duration(static_cast<double>(r.min), run.axis),
               format_duration(r.median, run.axis),
               format_duration(static_cast<double>(r.max), run.axis), table.units[r.slowest]);
  }
  return run.status;
}

}  // namespace

void add_iterations_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<IterationsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "iterations",
      "The main iterations per rank (outermost repeating loop, or between parlot_mark calls): "
      "the ones that stand out with their cause, then min/median/max per iteration");
  cmd->add_option("dir", options->dir, "Trace directory")->required();
  cmd->add_option("--pid", options->selection.pid, "Only this process");
  cmd->add_option("--tid", options->selection.tid, "Only this thread");
  cmd->add_option("--loop", options->loop,
                  "Iterations start at the calls of FUNCTION (its shallowest call depth)");
  cmd->add_option("--format", options->format, "text, or csv: the per-iteration summary only")
      ->check(CLI::IsMember({"text", "csv"}))
      ->capture_default_str();
  cmd->add_option("--top", options->top, "Iterations that stand out, at most (0 = all)")
      ->capture_default_str();
  cmd->callback([options, &exit_status] { exit_status = run_iterations(*options); });
}

}  // namespace parlot::tool
