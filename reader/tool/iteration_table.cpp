#include "iteration_table.h"

#include <fmt/format.h>

#include <cmath>

#include "export_trace.h"
#include "reduced_file.h"

namespace parlot::tool {

TimedRun read_timed_run(const std::string& dir, const Selection& selection) {
  TimedRun run;
  run.processes = open_run(dir, selection);
  for (const auto& p : run.processes) run.ranked = run.ranked || !p.metadata.rank.empty();
  run.axis = choose_time_axis(run.processes, selection);
  TimedThreadCollector collector(run.names, run.ranked);
  run.status = export_trace(run.processes, selection, {}, run.axis, false, {}, collector);
  run.threads = collector.take();
  return run;
}

analysis::IterationTable iteration_table(const TimedRun& run,
                                         const analysis::IterationChoice& choice,
                                         std::vector<std::string>& hows) {
  analysis::IterationTable table;
  hows.clear();
  std::vector<std::optional<ReducedProcess>> reduced(run.processes.size());
  std::vector<bool> looked(run.processes.size(), false);
  for (const CollectedThread& c : run.threads) {
    const auto& t = c.thread;
    if (!looked[c.process]) {
      reduced[c.process] = read_reduced(run.processes[c.process].directory);
      looked[c.process] = true;
    }
    const auto& r = reduced[c.process];
    const auto kept = r ? r->threads.find(c.index) : decltype(r->threads.cend()){};
    if (r && kept != r->threads.end()) {
      // The kept segments, timed in the reduced stream, stand for their members.
      std::vector<analysis::Segment> segments;
      auto time_at = [&](std::uint64_t j) {
        return j < t.events.size() ? t.events[j].time : t.end_time;
      };
      for (const auto& s : kept->second) {
        const std::size_t first = std::min<std::uint64_t>(s.first, t.events.size());
        const std::size_t end = std::min<std::uint64_t>(s.end, t.events.size());
        segments.push_back({first, end, time_at(first), time_at(end)});
      }
      const auto times = analysis::time_segments(t, run.names, segments);
      std::vector<analysis::IterationTime> expanded;
      for (std::size_t k = 0; k < times.size(); ++k) {
        for (const std::uint64_t m : kept->second[k].members) {
          constexpr std::uint64_t kMaxIterations = std::uint64_t{1} << 26;
          if (m >= kMaxIterations) continue;  // a damaged file never sizes memory
          if (m >= expanded.size()) expanded.resize(m + 1);
          expanded[m] = times[k];
        }
      }
      table.units.push_back(t.name);
      table.times.push_back(std::move(expanded));
      hows.push_back("reduced: " + r->metric);
      continue;
    }
    const auto seg = analysis::find_iterations(t, run.names, choice);
    table.units.push_back(t.name);
    table.times.push_back(analysis::time_segments(t, run.names, seg.segments));
    hows.push_back(seg.how);
  }
  return table;
}

namespace {

/// "rank 0, 2, 3" / "ranks 0, 2, 3" when every name is "rank N", else the
/// names joined.
std::string unit_list(const analysis::IterationTable& t, const std::vector<std::size_t>& units) {
  bool ranks = true;
  for (const auto u : units) ranks = ranks && t.units[u].rfind("rank ", 0) == 0;
  std::string out = ranks ? (units.size() == 1 ? "rank " : "ranks ") : "";
  for (std::size_t i = 0; i < units.size(); ++i) {
    out += (i ? ", " : "") + (ranks ? t.units[units[i]].substr(5) : t.units[units[i]]);
  }
  return out;
}

}  // namespace

std::string standout_line(const analysis::Standout& s, const analysis::IterationTable& t,
                          const analysis::NameIndex& names, const exporter::TimeAxis& axis) {
  // A change with its sign: "+50.0 ms", "-1.3 us".
  auto change = [&](double v) { return (v < 0 ? "-" : "+") + format_duration(std::fabs(v), axis); };
  std::string line = fmt::format("iteration {}: {} (median {}, {}): {} {} {}", s.iteration,
                                 format_duration(static_cast<double>(s.time), axis),
                                 format_duration(s.median, axis), change(s.excess), t.units[s.unit],
                                 s.category == analysis::TimeCategory::kComputation
                                     ? "compute"
                                     : analysis::category_label(s.category),
                                 change(s.work_excess));
  if (s.function) {
    line += fmt::format(" in {} ({})", names.name(*s.function), change(s.function_excess));
  }
  if (s.waiters.empty()) {
    line += t.units.size() > 1 ? "; no other one waited longer" : "";
  } else {
    line += fmt::format("; {} waited {} (mean over the others)", unit_list(t, s.waiters),
                        change(s.wait_excess));
    if (s.wait_function) line += " in " + names.name(*s.wait_function);
  }
  return line;
}

std::string format_duration(double value, const exporter::TimeAxis& axis) {
  if (axis.logical()) return fmt::format("{:.0f} events", value);
  const double a = std::fabs(value);
  if (a >= 1e9) return fmt::format("{:.2f} s", value / 1e9);
  if (a >= 1e6) return fmt::format("{:.1f} ms", value / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f} us", value / 1e3);
  return fmt::format("{:.0f} ns", value);
}

}  // namespace parlot::tool
