// parlot-read reduce DIR -o OUT: similarity-based trace reduction (Mohror
// and Karavanic, SC 2009). Each thread's iterations (as `iterations` finds
// them) are its segments; a segment that matches an earlier kept one with
// the same events within the metric's threshold is left out, and OUT, an
// ordinary trace directory, holds the kept ones with their clock samples
// rewritten so the time axis stays continuous, plus a `reduced` file per
// process naming what each kept segment stands for (docs/FORMAT.md).
// --evaluate prints the seed's four criteria for the reduction made.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "analysis/reduction.h"
#include "commands.h"
#include "export_trace.h"
#include "iteration_table.h"
#include "lib/input_files.h"
#include "reduced_file.h"
#include "thread_file_writer.h"
#include "timed_thread_collector.h"

namespace parlot::tool {

namespace {

namespace fs = std::filesystem;

struct ReduceOptions {
  std::string dir;
  std::string out;
  std::string metric = "avgwave";
  std::optional<double> threshold;
  std::string loop;
  std::uint64_t tolerance_ns = 10000;
  bool evaluate = false;
};

/// What the reduction of the whole run did.
struct RunReduction {
  std::size_t threads = 0;  ///< threads reduced (with two segments or more)
  std::size_t segments = 0;
  std::size_t kept = 0;
  std::size_t signatures = 0;
  std::vector<double> errors;
  bool logical = false;  ///< times are event indices (the trace has no clock)
};

std::uint64_t directory_bytes(const fs::path& dir) {
  std::uint64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) n += e.file_size();
  }
  return n;
}

/// Writes thread `c` reduced into `file`; returns its kept segments.
std::vector<ReducedSegment> write_reduced_thread(const CollectedThread& c,
                                                 const std::vector<analysis::Segment>& segments,
                                                 const analysis::ThreadReduction& red,
                                                 const ThreadTraceSummary& original,
                                                 const exporter::TimeAxis& axis,
                                                 const ReduceOptions& o, const fs::path& file) {
  const auto& t = c.thread;
  const std::size_t n = t.events.size();
  auto time_at = [&](std::size_t j) { return j < n ? t.events[j].time : t.end_time; };
  ThreadFileContents out;
  out.tid = c.tid;
  out.pid = c.pid;
  out.thread_index = c.index;
  out.start_ns = original.start_ns;
  std::vector<std::uint64_t> times;
  std::int64_t shift = 0;
  std::size_t mark = 0;
  auto shifted = [&](std::uint64_t time) {
    const std::int64_t v = static_cast<std::int64_t>(time) - shift;
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, v));
  };
  // Marks before original event `limit`, at the reduced stream's position;
  // with `drop`, left out.
  auto marks_before = [&](std::size_t limit, bool drop) {
    for (; mark < t.marks.size() && t.marks[mark].index < limit; ++mark) {
      if (!drop) out.marks.emplace_back(out.events.size(), t.marks[mark].label);
    }
  };
  auto copy = [&](std::size_t from, std::size_t to) {
    for (std::size_t j = from; j < to; ++j) {
      marks_before(j + 1, false);
      out.events.push_back(t.events[j].enter() ? t.events[j].id : 0);
      times.push_back(shifted(t.events[j].time));
    }
  };
  std::vector<ReducedSegment> kept;
  std::size_t cur = 0;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const auto& seg = segments[s];
    copy(cur, seg.first);
    cur = seg.end;
    const std::int64_t length =
        static_cast<std::int64_t>(time_at(seg.end)) - static_cast<std::int64_t>(time_at(seg.first));
    if (red.representative[s] != s) {
      marks_before(seg.end, true);
      shift += length;
      continue;
    }
    ReducedSegment r;
    r.first = out.events.size();
    const std::uint64_t base = shifted(time_at(seg.first));
    const auto& written = red.written[s];
    for (std::size_t j = seg.first; j < seg.end; ++j) {
      marks_before(j + 1, false);
      out.events.push_back(t.events[j].enter() ? t.events[j].id : 0);
      times.push_back(base + static_cast<std::uint64_t>(std::llround(written[j - seg.first])));
    }
    r.end = out.events.size();
    // What follows starts where the written segment ends.
    shift += length - std::llround(written.back());
    for (std::size_t m = 0; m < segments.size(); ++m) {
      if (red.representative[m] == s) r.members.push_back(m);
    }
    kept.push_back(std::move(r));
  }
  copy(cur, n);
  marks_before(SIZE_MAX, false);
  const std::uint64_t end = shifted(t.end_time);
  if (!axis.logical()) {
    out.samples = thin_samples(times, end, o.tolerance_ns);
    for (auto& sample : out.samples) sample.second += axis.origin_ns;
  }
  const std::uint64_t first = times.empty() ? end : times.front();
  out.end_ns = original.start_ns + (axis.logical() ? 0 : end - first);
  write_thread_file(file, out);
  return kept;
}

RunReduction reduce_run(const ReduceOptions& o, analysis::Metric metric, double threshold,
                        int& status) {
  const Selection all;
  const auto processes = open_run(o.dir, all);
  for (const ProcessTrace& p : processes) {
    // Its iterations would be renumbered: the original numbers would be lost.
    if (read_reduced(p.directory)) {
      throw CLI::ValidationError(
          "dir", o.dir + " is already reduced (" + (p.directory / kReducedFileName).string() + ")");
    }
  }
  const auto axis = choose_time_axis(processes, all);
  const fs::path out_dir(o.out);
  RunReduction total;
  total.logical = axis.logical();
  analysis::NameIndex names;
  std::string head;  // as `iterations` segments: the first thread's loop head for all
  for (const ProcessTrace& p : processes) {
    TimedThreadCollector collector(names, false);
    status |= export_trace({p}, all, {}, axis, false, {}, collector);
    const auto threads = collector.take();
    const fs::path target = out_dir / p.directory.filename();
    fs::create_directories(target);
    // The process's files, from its directory or its node file (written
    // out as a directory of the process layout).
    bool in_node_file = false;
    for (const auto& f : detail::list_virtual_directory(p.directory, in_node_file)) {
      if (f.filename() == kReducedFileName) continue;
      const auto in = detail::open_input(f);
      std::ofstream out(target / f.filename(), std::ios::binary | std::ios::trunc);
      out << in->rdbuf();
      if (!out) throw FormatError(target / f.filename(), 0, "cannot write the copy");
    }
    for (const auto& e :
         in_node_file ? fs::directory_iterator() : fs::directory_iterator(p.directory)) {
      const std::string name = e.path().filename().string();
      if (!e.is_regular_file() || name == kReducedFileName) continue;
      fs::copy_file(e.path(), target / name, fs::copy_options::overwrite_existing);
    }
    ReducedProcess record;
    record.metric = std::string(analysis::metric_name(metric));
    record.threshold = threshold;
    for (const CollectedThread& c : threads) {
      const auto seg = segment_unit(c.thread, names, o.loop, head);
      if (seg.segments.size() < 2) continue;  // copied as it is
      // Its file (the copy is replaced).
      std::optional<ThreadTraceSummary> summary;
      for (const auto& f : p.thread_files) {
        ThreadEventReader reader(f);
        if (reader.summary().thread_index == c.index && reader.summary().tid == c.tid) {
          summary = reader.summary();
          break;
        }
      }
      if (!summary) continue;
      const auto red = analysis::reduce_segments(c.thread, seg.segments, metric, threshold);
      record.threads[c.index] = write_reduced_thread(c, seg.segments, red, *summary, axis, o,
                                                     target / summary->path.filename());
      ++total.threads;
      total.segments += seg.segments.size();
      total.kept += red.kept;
      total.signatures += red.signatures;
      total.errors.insert(total.errors.end(), red.errors.begin(), red.errors.end());
    }
    if (!record.threads.empty()) write_reduced(target, record);
  }
  return total;
}

/// The performance trends of `dir` ("iterations" reads a reduced trace
/// expanded): what `--evaluate` compares.
struct Trends {
  std::optional<std::size_t> slowest;         ///< the slowest iteration
  std::vector<analysis::Standout> standouts;  ///< every iteration that stands out
  std::size_t busiest = 0;                    ///< the unit with the most work over all iterations
  double imbalance = 0;                       ///< its work / the mean work
  std::string text;                           ///< for the report
};

Trends trends_of(const std::string& dir) {
  const IterationRun run = read_iterations(dir, {}, "");
  const auto& table = run.table;
  Trends t;
  const auto rows = analysis::spread(table);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (rows[k].units > 0 && (!t.slowest || rows[k].max > rows[*t.slowest].max)) t.slowest = k;
  }
  t.standouts = analysis::find_standouts(table, run.names, 0);
  std::vector<double> work(table.units.size(), 0.0);
  double sum = 0;
  for (std::size_t u = 0; u < work.size(); ++u) {
    for (const auto& it : table.times[u]) work[u] += static_cast<double>(it.work());
    sum += work[u];
    if (work[u] > work[t.busiest]) t.busiest = u;
  }
  const double mean = work.empty() ? 0 : sum / static_cast<double>(work.size());
  t.imbalance = mean > 0 ? work[t.busiest] / mean : 0;
  const std::string first = t.standouts.empty()
                                ? "none"
                                : fmt::format("iteration {} {}", t.standouts.front().iteration,
                                              table.units[t.standouts.front().unit]);
  t.text = fmt::format(
      "slowest iteration {}, {} standing out, the first {}, most work {} ({:.3f} x mean)",
      t.slowest ? std::to_string(*t.slowest) : "-", t.standouts.size(), first,
      table.units.empty() ? "-" : table.units[t.busiest], t.imbalance);
  return t;
}

void print_evaluation(const ReduceOptions& o, const RunReduction& r, analysis::Metric metric,
                      double threshold) {
  const std::uint64_t full = directory_bytes(o.dir), reduced = directory_bytes(o.out);
  fmt::print("# evaluation (Mohror and Karavanic's four criteria), metric {} threshold {}\n",
             analysis::metric_name(metric), threshold);
  fmt::print("size: {} of {} bytes, {:.1f}% of the full trace\n", reduced, full,
             full ? 100.0 * static_cast<double>(reduced) / static_cast<double>(full) : 0.0);
  const std::size_t matches = r.segments - r.kept, possible = r.segments - r.signatures;
  fmt::print("degree of matching: {:.3f} ({} matches of {} possible; {} segments, {} kept)\n",
             possible ? static_cast<double>(matches) / static_cast<double>(possible) : 1.0, matches,
             possible, r.segments, r.kept);
  const Trends a = trends_of(o.dir), b = trends_of(o.out);
  exporter::TimeAxis axis;
  axis.unit = r.logical ? exporter::TimeUnit::kEvents : exporter::TimeUnit::kNanoseconds;
  fmt::print("approximation distance: {} (90% of the {} recreated times are within it)\n",
             format_duration(analysis::percentile(r.errors, 0.9), axis), r.errors.size());
  const bool slowest = a.slowest == b.slowest;
  const bool standout =
      a.standouts.empty() == b.standouts.empty() &&
      (a.standouts.empty() || (a.standouts.front().iteration == b.standouts.front().iteration &&
                               a.standouts.front().unit == b.standouts.front().unit));
  std::size_t found = 0;
  for (const auto& x : a.standouts) {
    for (const auto& y : b.standouts) found += x.iteration == y.iteration ? 1 : 0;
  }
  const bool imbalance = a.busiest == b.busiest &&
                         std::fabs(a.imbalance - b.imbalance) <= 0.1 * std::max(a.imbalance, 1e-9);
  fmt::print("trends: full: {}\n", a.text);
  fmt::print("trends: reduced: {}\n", b.text);
  fmt::print(
      "trends retained: slowest iteration {}, first standout {}, imbalance {}; {} of {} "
      "standouts found ({})\n",
      slowest ? "yes" : "no", standout ? "yes" : "no", imbalance ? "yes" : "no", found,
      a.standouts.size(), slowest && standout && imbalance ? "retained" : "not retained");
}

int run_reduce(const ReduceOptions& o) {
  const auto metric = analysis::parse_metric(o.metric);
  if (!metric) throw CLI::ValidationError("--metric", "unknown metric '" + o.metric + "'");
  const double threshold = o.threshold.value_or(analysis::default_threshold(*metric));
  std::error_code ec;
  if (fs::exists(o.out, ec) && !fs::is_empty(o.out, ec)) {
    throw CLI::ValidationError("-o", o.out + " exists and is not empty");
  }
  int status = 0;
  const RunReduction r = reduce_run(o, *metric, threshold, status);
  fmt::print("reduced {} threads: {} segments, {} kept ({} {}); written to {}\n", r.threads,
             r.segments, r.kept, analysis::metric_name(*metric), threshold, o.out);
  if (o.evaluate) print_evaluation(o, r, *metric, threshold);
  return status;
}

}  // namespace

void add_reduce_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<ReduceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "reduce",
      "Similarity-based trace reduction: keep one iteration per group of similar ones (with "
      "the count and spans of those it stands for) in a smaller trace directory");
  cmd->add_option("dir", options->dir, "Trace directory")->required();
  cmd->add_option("-o,--output", options->out, "Reduced trace directory (new or empty)")
      ->required();
  std::string names;
  for (const auto m : analysis::kAllMetrics) {
    names += (names.empty() ? "" : ", ") + std::string(analysis::metric_name(m));
  }
  cmd->add_option("--metric", options->metric, "Similarity metric: " + names)
      ->capture_default_str();
  cmd->add_option("--threshold", options->threshold,
                  "Match threshold (default: the metric's best in the seed study; absdiff in "
                  "ns, iterk: k)");
  cmd->add_option("--loop", options->loop, "Iterations start at the calls of FUNCTION");
  cmd->add_option("--tolerance", options->tolerance_ns,
                  "Clock samples of the reduced threads: largest interpolation error, ns")
      ->capture_default_str();
  cmd->add_flag("--evaluate", options->evaluate,
                "Print the four criteria: size, degree of matching, approximation distance, "
                "performance trends retained");
  cmd->callback([options, &exit_status] { exit_status = run_reduce(*options); });
}

}  // namespace parlot::tool
