#include "iteration_table.h"

#include <fmt/format.h>

#include <cmath>

#include <CLI/CLI.hpp>

#include "export_trace.h"
#include "reduced_file.h"
#include "timed_thread_collector.h"

namespace parlot::tool {

namespace {

/// The kept segments of a reduced thread, timed in the reduced stream,
/// each standing for its original iterations.
std::vector<analysis::IterationTime> expand_reduced(const analysis::TimedThread& t,
                                                    const analysis::NameIndex& names,
                                                    const std::vector<ReducedSegment>& kept) {
  std::vector<analysis::Segment> segments;
  auto time_at = [&](std::uint64_t j) {
    return j < t.events.size() ? t.events[j].time : t.end_time;
  };
  for (const auto& s : kept) {
    const std::size_t first = std::min<std::uint64_t>(s.first, t.events.size());
    const std::size_t end = std::min<std::uint64_t>(s.end, t.events.size());
    segments.push_back({first, end, time_at(first), time_at(end)});
  }
  const auto times = analysis::time_segments(t, names, segments);
  std::vector<analysis::IterationTime> expanded;
  for (std::size_t k = 0; k < times.size(); ++k) {
    for (const std::uint64_t m : kept[k].members) {
      constexpr std::uint64_t kMaxIterations = std::uint64_t{1} << 26;
      if (m >= kMaxIterations) continue;  // a damaged file never sizes memory
      if (m >= expanded.size()) expanded.resize(m + 1);
      expanded[m] = times[k];
    }
  }
  return expanded;
}

}  // namespace

analysis::Segmentation segment_unit(const analysis::TimedThread& t,
                                    const analysis::NameIndex& names, const std::string& loop,
                                    std::string& head) {
  analysis::IterationChoice choice;
  if (!loop.empty()) {
    choice.loop = names.find(loop);
    if (!choice.loop) return {};
    return analysis::find_iterations(t, names, choice);
  }
  if (t.marks.size() >= 2) return analysis::find_iterations(t, names, choice);
  if (!head.empty()) {
    choice.loop = names.find(head);
    if (choice.loop) {
      auto seg = analysis::find_iterations(t, names, choice);
      if (seg.segments.size() >= 2) {
        seg.how = "loop of " + head;
        return seg;
      }
    }
  }
  auto seg = analysis::find_iterations(t, names, {});
  if (head.empty() && seg.how.rfind("loop of ", 0) == 0) head = seg.how.substr(8);
  return seg;
}

IterationRun read_iterations(const std::string& dir, const Selection& selection,
                             const std::string& loop) {
  IterationRun run;
  const auto processes = open_run(dir, selection);
  for (const auto& p : processes) run.ranked = run.ranked || !p.metadata.rank.empty();
  run.axis = choose_time_axis(processes, selection);
  std::string head;  // the first unit's loop head (segment_unit)
  bool loop_found = loop.empty();
  for (const ProcessTrace& p : processes) {
    TimedThreadCollector collector(run.names, run.ranked);
    run.status |= export_trace({p}, selection, {}, run.axis, false, {}, collector);
    const auto threads = collector.take();
    const auto reduced = threads.empty() ? std::nullopt : read_reduced(p.directory);
    for (const CollectedThread& c : threads) {
      const auto& t = c.thread;
      run.table.units.push_back(t.name);
      const auto kept =
          reduced ? reduced->threads.find(c.index) : decltype(reduced->threads.cend()){};
      if (reduced && kept != reduced->threads.end()) {
        run.table.times.push_back(expand_reduced(t, run.names, kept->second));
        run.hows.push_back("reduced: " + reduced->metric);
        continue;
      }
      const auto seg = segment_unit(t, run.names, loop, head);
      loop_found = loop_found || seg.segments.size() >= 2;
      run.table.times.push_back(analysis::time_segments(t, run.names, seg.segments));
      run.hows.push_back(seg.how);
    }
  }
  if (!loop_found && !run.names.find(loop)) {
    throw CLI::ValidationError("--loop", "no function named '" + loop + "' in " + dir);
  }
  return run;
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
  std::string line = fmt::format("iteration {}: {} (median {}, {}): ", s.iteration,
                                 format_duration(static_cast<double>(s.time), axis),
                                 format_duration(s.median, axis), change(s.excess));
  // A rank whose own work grew by less than a quarter of the excess does
  // not explain it (the time went to waiting, e.g. a rank descheduled).
  const bool explained = s.work_excess >= 0.25 * s.excess;
  if (!explained) line += "no rank's own work explains it (most: ";
  line += fmt::format("{} {} {}", t.units[s.unit],
                      s.category == analysis::TimeCategory::kComputation
                          ? "compute"
                          : analysis::category_label(s.category),
                      change(s.work_excess));
  if (s.function) {
    line += fmt::format(" in {} ({})", names.name(*s.function), change(s.function_excess));
  }
  if (!explained) line += ")";
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
