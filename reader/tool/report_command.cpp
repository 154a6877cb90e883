// parlot-read report: by default the time statistics, answer first
// (report_summary.h: where the time goes, top functions, each rank's split
// into computation, MPI and I/O, load imbalance); with --by function, per
// function, calls, total (inclusive) and self (exclusive) cost and the
// deepest call depth, like `uftrace report`; with
// --by thread or --by rank, one row per thread or per process (rank), like
// `uftrace report --task`; with --diff, the same columns as deltas against
// another trace. Functions are merged by name over every selected thread and
// process.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "commands.h"
#include "export/call_tree_collector.h"
#include "export_trace.h"
#include "report_summary.h"
#include "time_bound.h"
#include "time_stats_collector.h"
#include "trace_input.h"
#include "visible_text.h"

namespace parlot::tool {
namespace {

struct ReportOptions {
  std::string dir;
  std::string diff;
  Selection selection;
  analysis::FunctionFilter filter;
  std::string sort = "total";
  std::string by = "summary";
  std::string format = "text";
  std::size_t top = 10;
  bool simplify = false;
};

struct FunctionRow {
  std::uint64_t calls = 0;
  std::uint64_t total = 0;
  std::uint64_t self = 0;
  std::uint32_t max_depth = 0;
};

/// One thread's or one process's summary (--by thread|rank).
struct GroupRow {
  std::uint64_t total = 0;      ///< cost of its outermost calls, callees included
  std::uint64_t calls = 0;      ///< calls made (kept by the filters)
  std::uint64_t functions = 0;  ///< distinct functions called
  std::uint32_t max_depth = 0;  ///< deepest call (1 = outermost)
  std::string detail;           ///< "(pid P, tid T)"; not compared by --diff
};

/// The call tree for the function rows, plus one GroupRow per thread and per
/// process, keyed by a name stable across runs ("rank R thread I", or
/// "process K thread I" where K is the process's position without ranks).
class ReportCollector final : public exporter::Exporter {
 public:
  explicit ReportCollector(bool ranked) : ranked_(ranked) {}

  void begin_process(const exporter::ProcessInfo& p) override {
    if (process_open_) end_process();
    process_open_ = true;
    tree_.begin_process(p);
    process_name_ = ranked_ ? "rank " + visible_text(p.rank) : fmt::format("process {}", position_);
    ++position_;
    process_ = {};
    process_.detail = fmt::format("(pid {}, {})", p.pid, visible_text(p.executable));
    process_functions_.clear();
  }
  void begin_thread(const exporter::ThreadInfo& t) override {
    tree_.begin_thread(t);
    thread_name_ = fmt::format("{} thread {}", process_name_, t.index);
    thread_ = {};
    thread_.detail = fmt::format("(pid {}, tid {})", t.pid, t.tid);
    thread_functions_.clear();
  }
  void event(const CallEvent& e, std::uint64_t time) override {
    tree_.event(e, time);
    if (e.kind == CallEvent::Kind::kEnter) {
      ++thread_.calls;
      thread_.max_depth = std::max(thread_.max_depth, e.depth + 1);
      thread_functions_.insert(e.function_id);
      process_functions_.insert(e.function_id);
      if (e.depth == 0) outermost_entered_ = time;
    } else if (e.depth == 0) {
      thread_.total += time - outermost_entered_;
    }
  }
  void end_thread(std::uint64_t end_time) override {
    tree_.end_thread(end_time);
    thread_.functions = thread_functions_.size();
    process_.total += thread_.total;
    process_.calls += thread_.calls;
    process_.max_depth = std::max(process_.max_depth, thread_.max_depth);
    threads_.emplace_back(thread_name_, thread_);
  }
  void end() override {
    if (process_open_) end_process();
    process_open_ = false;
  }

  const exporter::CallTree& tree() const { return tree_.tree(); }
  const std::vector<std::pair<std::string, GroupRow>>& threads() const { return threads_; }
  const std::vector<std::pair<std::string, GroupRow>>& processes() const { return processes_; }

 private:
  // Files the current process's row.
  void end_process() {
    process_.functions = process_functions_.size();
    processes_.emplace_back(process_name_, process_);
  }

  exporter::CallTreeCollector tree_;
  bool ranked_;
  bool process_open_ = false;
  std::size_t position_ = 0;
  std::string process_name_, thread_name_;
  GroupRow process_, thread_;
  std::unordered_set<std::uint32_t> process_functions_, thread_functions_;
  std::uint64_t outermost_entered_ = 0;
  std::vector<std::pair<std::string, GroupRow>> threads_, processes_;
};

struct Report {
  std::map<std::string, FunctionRow> rows;  ///< by function name
  std::vector<std::pair<std::string, GroupRow>> threads, processes;
  exporter::TimeAxis time;
  bool ranked = false;  ///< the run has MPI ranks
  int status = 0;
};

Report make_report(const std::string& dir, const ReportOptions& o) {
  Report report;
  const auto processes = open_run(dir, o.selection);
  bool ranked = false;
  for (const auto& p : processes) ranked = ranked || !p.metadata.rank.empty();
  report.ranked = ranked;
  ReportCollector collector(ranked);
  report.time = choose_time_axis(processes, o.selection);
  report.status =
      export_trace(processes, o.selection, {}, report.time, o.simplify, o.filter, collector);
  const auto& tree = collector.tree();
  const auto totals = tree.function_totals();
  for (std::size_t k = 0; k < totals.size(); ++k) {
    FunctionRow& row = report.rows[visible_text(tree.functions()[k].name)];
    row.calls += totals[k].calls;
    row.total += totals[k].inclusive;
    row.self += totals[k].exclusive;
    row.max_depth = std::max(row.max_depth, totals[k].max_depth);
  }
  report.threads = collector.threads();
  report.processes = collector.processes();
  return report;
}

std::int64_t sort_key(const FunctionRow& r, const std::string& sort) {
  const std::uint64_t v = sort == "calls" ? r.calls : sort == "self" ? r.self : r.total;
  return static_cast<std::int64_t>(v);
}

/// Thread and process rows have no self column: `self` sorts by total.
std::int64_t sort_key(const GroupRow& r, const std::string& sort) {
  return static_cast<std::int64_t>(sort == "calls" ? r.calls : r.total);
}

std::string unit_label(const exporter::TimeAxis& time) {
  return time.logical() ? "events" : "ns";
}

void print_function_header(const exporter::TimeAxis& time) {
  const std::string unit = unit_label(time);
  fmt::print("{:>16}  {:>16}  {:>12}  {:>9}  {}\n", "total " + unit, "self " + unit, "calls",
             "max depth", "function");
}

void print_group_header(const Report& r, const std::string& by) {
  fmt::print("{:>16}  {:>12}  {:>9}  {:>9}  {}\n", "total " + unit_label(r.time), "calls",
             "functions", "max depth",
             by == "thread" ? "thread"
             : r.ranked     ? "rank"
                            : "process");
}

void print_report(const Report& r, const ReportOptions& o) {
  fmt::print("# time axis: {}\n", r.time.description);
  if (o.by == "function") {
    print_function_header(r.time);
    std::vector<const std::pair<const std::string, FunctionRow>*> rows;
    for (const auto& row : r.rows) rows.push_back(&row);
    std::stable_sort(rows.begin(), rows.end(), [&](auto* a, auto* b) {
      return sort_key(a->second, o.sort) > sort_key(b->second, o.sort);
    });
    for (const auto* row : rows) {
      const FunctionRow& f = row->second;
      fmt::print("{:>16}  {:>16}  {:>12}  {:>9}  {}\n", f.total, f.self, f.calls, f.max_depth,
                 row->first);
    }
    return;
  }
  print_group_header(r, o.by);
  auto rows = o.by == "thread" ? r.threads : r.processes;
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    return sort_key(a.second, o.sort) > sort_key(b.second, o.sort);
  });
  for (const auto& [name, g] : rows) {
    fmt::print("{:>16}  {:>12}  {:>9}  {:>9}  {} {}\n", g.total, g.calls, g.functions, g.max_depth,
               name, g.detail);
  }
}

std::string signed_delta(std::uint64_t base, std::uint64_t other) {
  const auto d = static_cast<std::int64_t>(other) - static_cast<std::int64_t>(base);
  return d == 0 ? "0" : fmt::format("{:+}", d);
}

/// Rows of both reports by name, largest change (of the sort key) first.
template <class Row>
std::vector<std::pair<std::string, std::pair<Row, Row>>> pair_rows(
    const std::vector<std::pair<std::string, Row>>& base,
    const std::vector<std::pair<std::string, Row>>& other, const std::string& sort) {
  std::map<std::string, std::pair<Row, Row>> both;
  for (const auto& [name, row] : base) both[name].first = row;
  for (const auto& [name, row] : other) both[name].second = row;
  std::vector<std::pair<std::string, std::pair<Row, Row>>> rows(both.begin(), both.end());
  auto magnitude = [&](const auto& row) {
    const std::int64_t d = sort_key(row.second.second, sort) - sort_key(row.second.first, sort);
    return d < 0 ? -d : d;
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const auto& a, const auto& b) { return magnitude(a) > magnitude(b); });
  return rows;
}

void print_diff(const Report& base, const Report& other, const ReportOptions& o) {
  fmt::print("# time axis: {}\n", base.time.description);
  fmt::print("# deltas: OTHER - DIR\n");
  if (o.by == "function") {
    print_function_header(base.time);
    const std::vector<std::pair<std::string, FunctionRow>> a(base.rows.begin(), base.rows.end());
    const std::vector<std::pair<std::string, FunctionRow>> b(other.rows.begin(), other.rows.end());
    for (const auto& [name, rows] : pair_rows(a, b, o.sort)) {
      const auto& [x, y] = rows;
      fmt::print("{:>16}  {:>16}  {:>12}  {:>9}  {}\n", signed_delta(x.total, y.total),
                 signed_delta(x.self, y.self), signed_delta(x.calls, y.calls),
                 signed_delta(x.max_depth, y.max_depth), name);
    }
    return;
  }
  print_group_header(base, o.by);
  const bool threads = o.by == "thread";
  for (const auto& [name, rows] : pair_rows(threads ? base.threads : base.processes,
                                            threads ? other.threads : other.processes, o.sort)) {
    const auto& [x, y] = rows;
    fmt::print("{:>16}  {:>12}  {:>9}  {:>9}  {}\n", signed_delta(x.total, y.total),
               signed_delta(x.calls, y.calls), signed_delta(x.functions, y.functions),
               signed_delta(x.max_depth, y.max_depth), name);
  }
}

/// The default view: the time statistics (report_summary.h).
void print_summary(const ReportOptions& o) {
  const auto processes = open_run(o.dir, o.selection);
  bool ranked = false;
  for (const auto& p : processes) ranked = ranked || !p.metadata.rank.empty();
  SummaryInput in;
  in.ranked = ranked;
  in.top = o.top;
  in.axis = choose_time_axis(processes, o.selection);
  in.bound = measure_time_bound(processes, o.selection);
  TimeStatsCollector collector(ranked);
  export_trace(processes, o.selection, {}, in.axis, o.simplify, o.filter, collector);
  in.stats = &collector.stats();
  fmt::print("{}", o.format == "json" ? summary_json(in) : summary_text(in));
}

int run_report(ReportOptions o) {
  if (o.by == "process") o.by = "rank";
  const analysis::FunctionMatcher check(o.filter);  // a bad pattern fails before any work
  if (o.format == "json" && (o.by != "summary" || !o.diff.empty())) {
    throw CLI::ValidationError("--format", "json is the summary's format (no --by, no --diff)");
  }
  if (o.by == "summary" && o.diff.empty()) {
    print_summary(o);
    return 0;
  }
  if (o.by == "summary") o.by = "function";  // --diff: per function
  const Report base = make_report(o.dir, o);
  if (o.diff.empty()) {
    print_report(base, o);
    return 0;
  }
  const Report other = make_report(o.diff, o);
  print_diff(base, other, o);
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Time statistics: where the time goes (computation, MPI communication, MPI waiting, I/O), "
      "top functions, per rank and thread, load imbalance; or per function, thread or rank: "
      "calls, total and self cost, max depth (like uftrace report)");
  cmd->add_option("dir", options->dir, "Trace directory")->required();
  cmd->add_option("--diff", options->diff, "Print deltas OTHER - DIR instead");
  cmd->add_option("--pid", options->selection.pid, "Only this process");
  cmd->add_option("--tid", options->selection.tid, "Only this thread");
  add_filter_options(cmd, options->filter);
  cmd->add_option("--sort", options->sort,
                  "Order by calls, self or total (descending; thread and rank rows: self = total)")
      ->check(CLI::IsMember({"calls", "self", "total"}))
      ->capture_default_str();
  cmd->add_option("--by", options->by,
                  "summary: the time statistics; or one row per function, per thread (like "
                  "uftrace report --task) or per rank (process; `process` is the same)")
      ->check(CLI::IsMember({"summary", "function", "thread", "rank", "process"}))
      ->capture_default_str();
  cmd->add_option("--format", options->format, "Summary as text or as one JSON object")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--top", options->top, "Summary: rows per list (0 = all)")->capture_default_str();
  cmd->add_flag("--simplify", options->simplify,
                "Shorter C++ names: template arguments collapsed, std-library noise removed");
  cmd->callback([options, &exit_status] { exit_status = run_report(*options); });
}

}  // namespace parlot::tool
