#include "report_summary.h"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <vector>

#include "visible_text.h"

namespace parlot::tool {
namespace {

using analysis::Imbalance;
using analysis::kTimeCategories;
using analysis::TimeCategory;
using analysis::TimeProfile;
using analysis::TimeStats;

/// Time for tables: ms with 3 decimals, or an event count.
std::string value(const SummaryInput& in, double v) {
  return in.axis.logical() ? fmt::format("{:.0f}", v) : fmt::format("{:.3f}", v / 1e6);
}
std::string unit(const SummaryInput& in) {
  return in.axis.logical() ? "events" : "ms";
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
  return fmt::format(
      "{:.1f}%", whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

/// Function keys by exclusive time, descending (ties: by name).
std::vector<std::uint32_t> by_self(const TimeStats& stats, const TimeProfile& p) {
  std::vector<std::uint32_t> keys;
  for (std::uint32_t k = 0; k < p.functions.size(); ++k) {
    if (p.functions[k].calls != 0) keys.push_back(k);
  }
  std::sort(keys.begin(), keys.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (p.functions[a].exclusive != p.functions[b].exclusive) {
      return p.functions[a].exclusive > p.functions[b].exclusive;
    }
    return stats.names()[a] < stats.names()[b];
  });
  return keys;
}

/// Imbalances over at least two members, in TimeStats::imbalance's order.
std::vector<Imbalance> shared(const std::vector<const TimeProfile*>& members) {
  std::vector<Imbalance> out;
  for (const Imbalance& im : TimeStats::imbalance(members)) {
    if (im.members >= 2) out.push_back(im);
  }
  return out;
}

std::size_t shown(const SummaryInput& in, std::size_t n) {
  return in.top == 0 ? n : std::min(n, in.top);
}

void split_row(std::string& out, const SummaryInput& in, const TimeProfile& p,
               const std::string& name) {
  for (std::size_t c = 0; c < kTimeCategories; ++c) {
    out += fmt::format("{:>12}", value(in, static_cast<double>(p.category[c])));
  }
  out += fmt::format("{:>12}  {}\n", value(in, static_cast<double>(p.total())), name);
}

void split_header(std::string& out, const char* what) {
  out += fmt::format("{:>12}{:>12}{:>12}{:>12}{:>12}  {}\n", "computation", "MPI comm", "MPI wait",
                     "I/O", "total", what);
}

void imbalance_table(std::string& out, const SummaryInput& in, const std::vector<Imbalance>& rows,
                     const std::vector<std::string>& member_names) {
  out += fmt::format("{:>12}{:>12}{:>10}  {:<16}  {}\n", "max", "mean", "max/mean", "slowest",
                     "function");
  for (std::size_t i = 0; i < shown(in, rows.size()); ++i) {
    const Imbalance& im = rows[i];
    out += fmt::format("{:>12}{:>12}{:>10.2f}  {:<16}  {}\n",
                       value(in, static_cast<double>(im.max)), value(in, im.mean), im.ratio(),
                       member_names[im.slowest], visible_text(in.stats->names()[im.function]));
  }
}

}  // namespace

std::string summary_text(const SummaryInput& in) {
  const TimeStats& stats = *in.stats;
  const TimeProfile program = stats.program();
  const std::uint64_t total = program.total();
  std::size_t threads = 0;
  for (const auto& p : stats.processes()) threads += p.threads.size();
  const char* process_word = in.ranked ? "rank" : "process";
  std::string out = fmt::format("# time: {}\n", in.bound.text());
  out += fmt::format("# {} {}{}, {} thread{}, {} {} in calls\n", stats.processes().size(),
                     process_word, stats.processes().size() == 1 ? "" : (in.ranked ? "s" : "es"),
                     threads, threads == 1 ? "" : "s", value(in, static_cast<double>(total)),
                     unit(in));

  // Where the time goes, largest share first.
  std::vector<std::size_t> order(kTimeCategories);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return program.category[a] > program.category[b];
  });
  out += "where the time goes:";
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && program.category[order[i]] == 0) break;  // none of it: not said
    out += fmt::format("{} {} {}", i == 0 ? "" : ",",
                       analysis::category_label(static_cast<TimeCategory>(order[i])),
                       percent(program.category[order[i]], total));
  }
  out += "\n";

  const auto keys = by_self(stats, program);
  out += fmt::format(
      "\ntop functions by self time ({}; {} of {} functions, --by function lists all):\n", unit(in),
      shown(in, keys.size()), keys.size());
  out +=
      fmt::format("{:>12}{:>8}{:>12}{:>12}  {}\n", "self", "self%", "total", "calls", "function");
  for (std::size_t i = 0; i < shown(in, keys.size()); ++i) {
    const analysis::FunctionTime& f = program.functions[keys[i]];
    out += fmt::format("{:>12}{:>8}{:>12}{:>12}  {}\n", value(in, static_cast<double>(f.exclusive)),
                       percent(f.exclusive, total), value(in, static_cast<double>(f.inclusive)),
                       f.calls, visible_text(stats.names()[keys[i]]));
  }

  const auto& processes = stats.processes();
  out += fmt::format("\ntime per {} ({}):\n", process_word, unit(in));
  split_header(out, process_word);
  for (std::size_t i = 0; i < shown(in, processes.size()); ++i) {
    split_row(out, in, processes[i].total, processes[i].name);
  }
  if (shown(in, processes.size()) < processes.size()) {
    out += fmt::format("  ... {} more (--top 0 shows all)\n", processes.size() - in.top);
  }

  if (processes.size() >= 2) {
    std::vector<const TimeProfile*> members;
    std::vector<std::string> names;
    for (const auto& p : processes) {
      members.push_back(&p.total);
      names.push_back(p.name);
    }
    out += fmt::format("\nimbalance across {} (self time in {}; mean over those that called it):\n",
                       in.ranked ? "ranks" : "processes", unit(in));
    imbalance_table(out, in, shared(members), names);
  }

  for (const auto& p : processes) {
    if (p.threads.size() < 2) continue;
    out += fmt::format("\ntime per thread of {} ({}):\n", p.name, unit(in));
    split_header(out, "thread");
    for (std::size_t t = 0; t < p.threads.size(); ++t)
      split_row(out, in, p.threads[t], p.thread_names[t]);
    std::vector<const TimeProfile*> members;
    for (const auto& t : p.threads) members.push_back(&t);
    out += fmt::format("imbalance across the threads of {} (self time in {}):\n", p.name, unit(in));
    imbalance_table(out, in, shared(members), p.thread_names);
  }
  return out;
}

std::string summary_json(const SummaryInput& in) {
  using nlohmann::ordered_json;
  const TimeStats& stats = *in.stats;
  auto categories = [](const TimeProfile& p) {
    ordered_json c = ordered_json::object();
    for (std::size_t k = 0; k < kTimeCategories; ++k) {
      c[std::string(analysis::category_key(static_cast<TimeCategory>(k)))] = p.category[k];
    }
    return c;
  };
  auto imbalances = [&](const std::vector<const TimeProfile*>& members,
                        const std::vector<std::string>& names) {
    ordered_json rows = ordered_json::array();
    for (const Imbalance& im : shared(members)) {
      rows.push_back({{"function", stats.names()[im.function]},
                      {"max", im.max},
                      {"mean", im.mean},
                      {"ratio", im.ratio()},
                      {"members", im.members},
                      {"slowest", names[im.slowest]}});
    }
    return rows;
  };
  const TimeProfile program = stats.program();
  ordered_json j;
  j["time"] = {{"unit", in.axis.logical() ? "events" : "ns"},
               {"bound", in.bound.text()},
               {"exact", in.bound.exact},
               {"max_span_ns", in.bound.max_span_ns},
               // The stated bound of an event's time (ns): the runtime's
               // recorded tick + tolerance, else the largest sample span.
               {"bound_ns", in.bound.exact      ? 0
                            : in.bound.recorded ? in.bound.recorded_bound_ns
                                                : in.bound.max_span_ns},
               {"call_end_bound_ns",
                in.bound.recorded ? in.bound.recorded_tolerance_ns : in.bound.max_span_ns},
               {"events", in.bound.events},
               {"timed_events", in.bound.timed_events}};
  j["total"] = program.total();
  j["categories"] = categories(program);
  ordered_json functions = ordered_json::array();
  for (const std::uint32_t k : by_self(stats, program)) {
    const analysis::FunctionTime& f = program.functions[k];
    functions.push_back({{"name", stats.names()[k]},
                         {"calls", f.calls},
                         {"inclusive", f.inclusive},
                         {"exclusive", f.exclusive}});
  }
  j["functions"] = std::move(functions);
  ordered_json processes = ordered_json::array();
  std::vector<const TimeProfile*> members;
  std::vector<std::string> names;
  ordered_json thread_imbalance = ordered_json::array();
  for (const auto& p : stats.processes()) {
    members.push_back(&p.total);
    names.push_back(p.name);
    ordered_json threads = ordered_json::array();
    std::vector<const TimeProfile*> thread_members;
    for (std::size_t t = 0; t < p.threads.size(); ++t) {
      threads.push_back({{"name", p.thread_names[t]},
                         {"categories", categories(p.threads[t])},
                         {"total", p.threads[t].total()}});
      thread_members.push_back(&p.threads[t]);
    }
    processes.push_back({{"name", p.name},
                         {"categories", categories(p.total)},
                         {"total", p.total.total()},
                         {"threads", std::move(threads)}});
    if (p.threads.size() >= 2) {
      thread_imbalance.push_back(
          {{"process", p.name}, {"functions", imbalances(thread_members, p.thread_names)}});
    }
  }
  j["processes"] = std::move(processes);
  j["imbalance"] = imbalances(members, names);
  j["thread_imbalance"] = std::move(thread_imbalance);
  return j.dump(1) + "\n";
}

}  // namespace parlot::tool
