#include "views.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include "analysis/classes.h"
#include "analysis/loops.h"
#include "analysis/stack_tree.h"
#include "export/call_tree_collector.h"
#include "export/export_walk.h"
#include "export/exporter.h"
#include "export/valid_utf8.h"
#include "parlot/mark_cursor.h"
#include "tool/visible_text.h"

namespace parlot::python {
namespace {

/// A process's names as the exporters (and so `report`) see them.
class ExportNames final : public exporter::FunctionSource {
 public:
  explicit ExportNames(tool::FunctionNames& names) : names_(names) {}
  const exporter::FunctionInfo& function(std::uint32_t id) override {
    auto it = infos_.find(id);
    if (it != infos_.end()) return it->second;
    const SourceLocation& loc = names_.lookup(id);
    return infos_
        .emplace(id,
                 exporter::FunctionInfo{exporter::printable_utf8(loc.function),
                                        exporter::printable_utf8(loc.file),
                                        static_cast<std::uint32_t>(loc.line < 0 ? 0 : loc.line)})
        .first->second;
  }

 private:
  tool::FunctionNames& names_;
  std::map<std::uint32_t, exporter::FunctionInfo> infos_;
};

/// The time axis `report` uses (parlot-read's choose_time_axis): real time
/// when every thread has at least two clock samples, else the logical clock.
exporter::TimeAxis time_axis(const Run& run) {
  exporter::TimeAxis axis;
  std::uint64_t origin = ~std::uint64_t{0};
  bool any = false;
  for (const auto& process : run.processes()) {
    for (const auto& file : process.trace.thread_files) {
      std::optional<ThreadEventReader> reader;
      try {
        reader.emplace(file);
      } catch (const FormatError&) {
        continue;
      }
      const auto& s = reader->summary();
      if (s.clock_samples.size() < 2) return axis;
      origin = std::min(origin, s.clock_samples.front().ns);
      any = true;
    }
  }
  if (!any) return axis;
  axis.unit = exporter::TimeUnit::kNanoseconds;
  axis.description = exporter::kRealTimeDescription;
  axis.origin_ns = origin;
  return axis;
}

/// The damage message of a thread read to its end without a trailer.
void note_damage(const ThreadTraceSummary& s, std::vector<std::string>& damage) {
  if (!s.trailer && !s.damage.empty()) {
    damage.push_back(fmt::format("{}: offset {}: {}", s.path.string(), s.damage_offset, s.damage));
  }
}

/// Calls `on_event(const analysis::Event&)` for each event of thread `t`
/// the views see: tracked, keyed by name, up to the exits the runtime
/// added at the end. Returns false (the message in `damage`) when the file
/// is damaged; the events before the damage were passed on.
template <class OnEvent>
bool view_events(Run& run, const RunThread& t, std::vector<std::string>& damage,
                 OnEvent&& on_event) {
  const RunProcess& p = run.processes()[t.process];
  try {
    ThreadEventReader reader(t.file);
    CallStackTracker tracker(p.trace.function_addresses.size(), t.file);
    std::uint64_t index = 0;
    for (auto batch = reader.next_batch(); !batch.empty(); batch = reader.next_batch()) {
      for (const std::uint32_t raw : batch) {
        if (index == t.program_events) return true;
        ++index;
        const CallEvent c = tracker.push(raw);
        const analysis::FunctionKey key =
            c.function_id < p.keys.size()
                ? p.keys[c.function_id]
                : analysis::function_key(fmt::format("#{}", c.function_id));
        on_event(analysis::Event{c.kind == CallEvent::Kind::kEnter, key, c.depth});
      }
    }
    note_damage(reader.summary(), damage);
    return true;
  } catch (const FormatError& e) {
    damage.push_back(e.what());
    return false;
  }
}

/// Every thread of `run` through `out` on `axis`, as parlot-read's export
/// walk (export_trace) feeds an exporter; damage into `damage`.
void walk_run(Run& run, const exporter::TimeAxis& axis, exporter::Exporter& out,
              std::vector<std::string>& damage) {
  std::deque<ExportNames> names;  // each process's, alive until the end
  for (std::size_t i = 0; i < run.processes().size(); ++i) {
    RunProcess& process = run.process(i);
    ExportNames& functions = names.emplace_back(*process.names);
    const auto& m = process.trace.metadata;
    out.begin_process({m.pid, exporter::printable_utf8(m.rank),
                       exporter::printable_utf8(m.executable), exporter::printable_utf8(m.host),
                       m.start_ns, &functions});
    for (const auto& file : process.trace.thread_files) {
      std::optional<ThreadEventReader> reader;
      try {
        reader.emplace(file);
      } catch (const FormatError& e) {
        damage.push_back(e.what());
        continue;
      }
      try {
        exporter::export_thread(*reader, process.trace.function_addresses.size(), {}, axis, out);
        note_damage(reader->summary(), damage);
      } catch (const FormatError& e) {
        damage.push_back(e.what());
      }
    }
  }
  out.end();
}

}  // namespace

std::vector<std::string> export_run(Run& run, const std::string& format,
                                    const std::string& output) {
  exporter::ExportOptions options;
  options.time = time_axis(run);
  options.top_edges = 50;                             // the command's --top default
  options.folded_max_bytes = std::uint64_t{1} << 30;  // and its folded limit
  auto out = exporter::make_exporter(format, output, options);
  if (!out) throw std::invalid_argument("unknown export format '" + format + "'");
  std::vector<std::string> damage;
  walk_run(run, options.time, *out, damage);
  return damage;
}

StatsTable function_stats(Run& run) {
  StatsTable table;
  const exporter::TimeAxis axis = time_axis(run);
  table.unit = axis.logical() ? "events" : "ns";
  table.description = axis.description;
  exporter::CallTreeCollector collector;
  walk_run(run, axis, collector, table.damage);
  const auto& tree = collector.tree();
  const auto totals = tree.function_totals();
  std::map<std::string, FunctionStats> rows;
  for (std::size_t k = 0; k < totals.size(); ++k) {
    const std::string name = tool::visible_text(tree.functions()[k].name);
    FunctionStats& row = rows[name];
    row.function = name;
    row.calls += totals[k].calls;
    row.total += totals[k].inclusive;
    row.self += totals[k].exclusive;
    row.max_depth = std::max(row.max_depth, totals[k].max_depth);
  }
  for (auto& [name, row] : rows) table.rows.push_back(std::move(row));
  return table;
}

std::vector<ThreadMark> thread_marks(Run& run, std::vector<std::string>& damage) {
  std::vector<ThreadMark> out;
  for (std::size_t i = 0; i < run.threads().size(); ++i) {
    const RunThread& t = run.threads()[i];
    try {
      ThreadEventReader reader(t.file);
      const auto& marks = reader.summary().marks;
      if (marks.empty()) continue;
      CallStackTracker tracker(run.processes()[t.process].trace.function_addresses.size(), t.file);
      MarkCursor cursor(marks);
      auto place = [&](const Mark& m) {
        out.push_back(
            {i, m.event_index, static_cast<std::uint32_t>(tracker.open_calls().size()), m.label});
      };
      std::uint64_t index = 0;
      try {
        for (auto batch = reader.next_batch(); !batch.empty(); batch = reader.next_batch()) {
          for (const std::uint32_t id : batch) {
            if (cursor.due(index)) [[unlikely]] {
              cursor.visit_until(index, place);
            }
            tracker.push(id);
            ++index;
          }
        }
        note_damage(reader.summary(), damage);
      } catch (const FormatError& e) {
        damage.push_back(e.what());
        continue;  // the marks before the damage are kept
      }
      cursor.visit_rest(place);
    } catch (const FormatError& e) {
      damage.push_back(e.what());
    }
  }
  return out;
}

std::vector<ThreadLoops> thread_loops(Run& run, std::size_t max_body,
                                      std::vector<std::string>& damage) {
  std::vector<ThreadLoops> out;
  for (std::size_t i = 0; i < run.threads().size(); ++i) {
    analysis::LoopBuilder builder(max_body);
    std::uint64_t events = 0;
    if (!view_events(run, run.threads()[i], damage, [&](const analysis::Event& e) {
          builder.push(e);
          ++events;
        })) {
      continue;
    }
    out.push_back({i, events, builder.finish().to_string(run.names())});
  }
  return out;
}

StacksResult open_stacks(Run& run) {
  StacksResult out;
  analysis::StackTree tree;
  for (std::size_t i = 0; i < run.threads().size(); ++i) {
    analysis::OpenStack stack;
    if (!view_events(run, run.threads()[i], out.damage,
                     [&](const analysis::Event& e) { stack.push(e); })) {
      continue;
    }
    tree.add(run.threads()[i].id, stack.frames());
    out.threads.push_back(i);
    auto& names = out.stacks.emplace_back();
    for (const auto key : stack.frames()) names.push_back(run.names().name(key));
  }
  out.text = tree.to_text(run.names(), run.ranked());
  out.dot = tree.to_dot(run.names(), run.ranked());
  return out;
}

std::vector<ThreadClass> thread_classes(Run& run, const std::string& by, std::size_t max_body,
                                        std::vector<std::string>& damage) {
  const analysis::ClassBy key = analysis::parse_class_by(by);
  analysis::Classes classes;
  std::map<std::uint64_t, std::vector<std::size_t>> members;  // hash -> threads
  for (std::size_t i = 0; i < run.threads().size(); ++i) {
    analysis::FingerprintBuilder fp(key, max_body);
    if (!view_events(run, run.threads()[i], damage,
                     [&](const analysis::Event& e) { fp.push(e); })) {
      continue;
    }
    const std::uint64_t hash = fp.finish();
    classes.add(run.threads()[i].id, hash);
    members[hash].push_back(i);
  }
  std::vector<ThreadClass> out;
  for (const auto& c : classes.ordered()) {
    out.push_back({c.label, c.members.to_string(run.ranked()), c.members.size(),
                   run.label(c.members.first()), c.hash, members[c.hash]});
  }
  return out;
}

}  // namespace parlot::python
