// parlot-read report: per function, calls, total (inclusive) and self
// (exclusive) cost and the deepest call depth, like `uftrace report`;
// with --diff, the same columns as deltas against another trace.
// Functions are merged by name over every selected thread and process.
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "commands.h"
#include "export/call_tree_collector.h"
#include "export_trace.h"

namespace parlot::tool {
namespace {

struct ReportOptions {
  std::string dir;
  std::string diff;
  Selection selection;
  std::string sort = "total";
  bool simplify = false;
};

struct FunctionRow {
  std::uint64_t calls = 0;
  std::uint64_t total = 0;
  std::uint64_t self = 0;
  std::uint32_t max_depth = 0;
};

struct Report {
  std::map<std::string, FunctionRow> rows;  ///< by function name
  exporter::TimeAxis time;
  int status = 0;
};

Report make_report(const std::string& dir, const ReportOptions& o) {
  exporter::CallTreeCollector collector;
  Report report;
  report.status = export_trace(open_trace_directory(dir), o.selection, {}, o.simplify, collector);
  const auto& tree = collector.tree();
  const auto totals = tree.function_totals();
  for (std::size_t k = 0; k < totals.size(); ++k) {
    FunctionRow& row = report.rows[tree.functions()[k].name];
    row.calls += totals[k].calls;
    row.total += totals[k].inclusive;
    row.self += totals[k].exclusive;
    row.max_depth = std::max(row.max_depth, totals[k].max_depth);
  }
  return report;
}

std::int64_t sort_key(const FunctionRow& r, const std::string& sort) {
  const std::uint64_t v = sort == "calls" ? r.calls : sort == "self" ? r.self : r.total;
  return static_cast<std::int64_t>(v);
}

std::string unit_label(const exporter::TimeAxis& time) {
  return time.logical() ? "events" : "ns";
}

void print_report(const Report& r, const std::string& sort) {
  fmt::print("# time axis: {}\n", r.time.description);
  const std::string unit = unit_label(r.time);
  fmt::print("{:>16}  {:>16}  {:>12}  {:>9}  {}\n", "total " + unit, "self " + unit, "calls",
             "max depth", "function");
  std::vector<const std::pair<const std::string, FunctionRow>*> rows;
  for (const auto& row : r.rows) rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(), [&](auto* a, auto* b) {
    return sort_key(a->second, sort) > sort_key(b->second, sort);
  });
  for (const auto* row : rows) {
    const FunctionRow& f = row->second;
    fmt::print("{:>16}  {:>16}  {:>12}  {:>9}  {}\n", f.total, f.self, f.calls, f.max_depth,
               row->first);
  }
}

std::string signed_delta(std::uint64_t base, std::uint64_t other) {
  const auto d = static_cast<std::int64_t>(other) - static_cast<std::int64_t>(base);
  return d == 0 ? "0" : fmt::format("{:+}", d);
}

void print_diff(const Report& base, const Report& other, const std::string& sort) {
  fmt::print("# time axis: {}\n", base.time.description);
  fmt::print("# deltas: OTHER - DIR\n");
  const std::string unit = unit_label(base.time);
  fmt::print("{:>16}  {:>16}  {:>12}  {:>9}  {}\n", "total " + unit, "self " + unit, "calls",
             "max depth", "function");
  std::map<std::string, std::pair<FunctionRow, FunctionRow>> both;
  for (const auto& [name, row] : base.rows) both[name].first = row;
  for (const auto& [name, row] : other.rows) both[name].second = row;
  std::vector<const std::pair<const std::string, std::pair<FunctionRow, FunctionRow>>*> rows;
  for (const auto& row : both) rows.push_back(&row);
  auto magnitude = [&](const auto* row) {
    const std::int64_t d = sort_key(row->second.second, sort) - sort_key(row->second.first, sort);
    return d < 0 ? -d : d;
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](auto* a, auto* b) { return magnitude(a) > magnitude(b); });
  for (const auto* row : rows) {
    const FunctionRow& a = row->second.first;
    const FunctionRow& b = row->second.second;
    fmt::print("{:>16}  {:>16}  {:>12}  {:>9}  {}\n", signed_delta(a.total, b.total),
               signed_delta(a.self, b.self), signed_delta(a.calls, b.calls),
               signed_delta(a.max_depth, b.max_depth), row->first);
  }
}

int run_report(const ReportOptions& o) {
  const Report base = make_report(o.dir, o);
  if (o.diff.empty()) {
    print_report(base, o.sort);
    return base.status;
  }
  const Report other = make_report(o.diff, o);
  print_diff(base, other, o.sort);
  return base.status | other.status;
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Per function: calls, total and self cost, max depth (like uftrace report)");
  cmd->add_option("dir", options->dir, "Trace directory")->required();
  cmd->add_option("--diff", options->diff, "Print deltas OTHER - DIR instead");
  cmd->add_option("--pid", options->selection.pid, "Only this process");
  cmd->add_option("--tid", options->selection.tid, "Only this thread");
  cmd->add_option("--sort", options->sort, "Order by calls, self or total (descending)")
      ->check(CLI::IsMember({"calls", "self", "total"}))
      ->capture_default_str();
  cmd->add_flag("--simplify", options->simplify,
                "Shorter C++ names: template arguments collapsed, std-library noise removed");
  cmd->callback([options, &exit_status] { exit_status = run_report(*options); });
}

}  // namespace parlot::tool
