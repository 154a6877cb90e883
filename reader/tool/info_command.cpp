// parlot-read info: processes and threads of a trace directory with events,
// raw and trace bytes, compression ratio, duration and bandwidth (the
// paper's §4.2 metrics).
#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <system_error>

#include "commands.h"
#include "function_names.h"
#include "library_calls_text.h"
#include "thread_walk.h"
#include "visible_text.h"

namespace parlot::tool {
namespace {

// The process's tracing switches (side record kind 9), by time: one line
// each, then the intervals tracing was on. Times are from `origin_ns`
// (the first clock sample; else the first switch), CLOCK_MONOTONIC.
void print_tracing_switches(std::vector<std::pair<TracingSwitch, std::uint64_t>>& switches,
                            std::uint64_t origin_ns) {
  if (switches.empty()) return;
  std::stable_sort(switches.begin(), switches.end(),
                   [](const auto& a, const auto& b) { return a.first.ns < b.first.ns; });
  if (origin_ns == 0 || origin_ns > switches.front().first.ns)
    origin_ns = switches.front().first.ns;
  const auto at = [&](std::uint64_t ns) {
    return fmt::format("{:.6f} s", static_cast<double>(ns - origin_ns) / 1e9);
  };
  std::size_t intervals = 0;
  // A first switch off: tracing was on from the start.
  std::string on_since = switches.front().first.on ? "" : "start";
  for (const auto& [sw, thread] : switches) {
    fmt::print("  tracing switched {} at {} (thread #{}, before its event {})\n",
               sw.on ? "on" : "off", at(sw.ns), thread, sw.event_index);
  }
  std::string list;
  for (const auto& [sw, thread] : switches) {
    if (sw.on && on_since.empty()) {
      on_since = at(sw.ns);
    } else if (!sw.on && !on_since.empty()) {
      list += fmt::format(" [{}, {}]", on_since, at(sw.ns));
      on_since.clear();
      ++intervals;
    }
  }
  if (!on_since.empty()) {
    list += fmt::format(" [{}, end]", on_since);
    ++intervals;
  }
  fmt::print("  tracing on in {} interval{}:{}\n", intervals, intervals == 1 ? "" : "s", list);
}

struct InfoOptions {
  std::string dir;
  Selection selection;
};

std::string human_duration(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.1f} us", ns / 1e3);
}

int run_info(const InfoOptions& o) {
  std::uint64_t all_events = 0, all_raw = 0, all_bytes = 0, all_threads = 0, all_marks = 0;
  for (const auto& process : open_run(o.dir, o.selection)) {
    const auto& m = process.metadata;
    std::string args;
    for (const auto& a : m.arguments) args += (args.empty() ? "" : " ") + visible_text(a);
    fmt::print("process {}{}: {}\n", m.pid, m.rank.empty() ? "" : " rank " + visible_text(m.rank),
               args);
    fmt::print("  executable {}, host {}, {} functions, {}\n", visible_text(m.executable),
               visible_text(m.host), process.function_addresses.size(),
               m.end_ns ? "duration " + human_duration(static_cast<double>(m.end_ns - m.start_ns))
                        : std::string("did not finish"));
    if (m.write_error != 0) {
      fmt::print("  trace cut by a write failure: {}\n",
                 std::error_code(m.write_error, std::generic_category()).message());
    }
    if (m.discard) {
      fmt::print("  recorded with PARLOT_DISCARD=1: events counted, no event data written\n");
    }
    if (process.library_calls) {
      fmt::print("  {}\n", describe_library_calls(*process.library_calls));
    }
    if (process.crash) {
      FunctionNames names(process);
      fmt::print("{}", describe_crash(*process.crash, names, "  "));
    }
    fmt::print("  {:>7} {:>9} {:>14} {:>14} {:>12} {:>9} {:>12} {:>10} {:>7}  {}\n", "thread",
               "tid", "events", "raw bytes", "trace bytes", "ratio", "duration", "kB/s", "marks",
               "notes");
    // Tracing switches of every thread, with the thread's index.
    std::vector<std::pair<TracingSwitch, std::uint64_t>> switches;
    std::uint64_t first_sample_ns = 0;
    for (const auto& file : process.thread_files) {
      std::optional<ThreadEventReader> opened;
      try {
        opened.emplace(file);
      } catch (const FormatError& e) {
        report_error(e);  // its header or block structure: nothing to count
        continue;
      }
      ThreadEventReader& reader = *opened;
      const auto& s = reader.summary();
      if (!o.selection.selects(s)) continue;
      std::uint64_t events = 0, raw = 0;
      double ns = 0;
      std::string notes;
      if (s.trailer) {
        events = s.trailer->events;
        raw = s.trailer->raw_bytes;
        ns = static_cast<double>(s.trailer->end_ns - s.start_ns);
        if (s.trailer->corrected_exits)
          notes += fmt::format("{} exits corrected by stack pointer; ", s.trailer->corrected_exits);
        if (s.trailer->unmatched_exits)
          notes += fmt::format("{} unmatched exits ignored; ", s.trailer->unmatched_exits);
        if (s.trailer->closed_at_end)
          notes += fmt::format("{} frames open at the end; ", s.trailer->closed_at_end);
        if (s.trailer->dropped_events)
          notes += fmt::format("{} events dropped; ", s.trailer->dropped_events);
        if (s.flight_window) {
          notes += fmt::format("flight window: the history before it was dropped ({} events); ",
                               s.flight_window->dropped_events);
        }
      } else {
        try {
          for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
            for (const std::uint32_t v : b) raw += codec::raw_bytes_of(v);
          }
          report_damage(s);
        } catch (const FormatError& e) {
          report_error(e);
        }
        events = reader.events_read();
        notes = fmt::format("cut short at offset {}", s.damage_offset);
      }
      const double ratio =
          s.file_bytes ? static_cast<double>(raw) / static_cast<double>(s.file_bytes) : 0;
      const double kbps = ns > 0 ? static_cast<double>(s.file_bytes) / 1e3 / (ns / 1e9) : 0;
      fmt::print("  {:>7} {:>9} {:>14} {:>14} {:>12} {:>9.1f} {:>12} {:>10.1f} {:>7}  {}\n",
                 fmt::format("#{}", s.thread_index), s.tid, events, raw, s.file_bytes, ratio,
                 ns > 0 ? human_duration(ns) : "-", kbps, s.marks.size(), notes);
      all_marks += s.marks.size();
      for (const TracingSwitch& sw : s.switches) switches.emplace_back(sw, s.thread_index);
      if (!s.clock_samples.empty() &&
          (first_sample_ns == 0 || s.clock_samples.front().ns < first_sample_ns)) {
        first_sample_ns = s.clock_samples.front().ns;
      }
      all_events += events;
      all_raw += raw;
      all_bytes += s.file_bytes;
      ++all_threads;
    }
    print_tracing_switches(switches, first_sample_ns);
  }
  fmt::print("total: {} threads, {} events, {} raw bytes, {} trace bytes, ratio {:.1f}, {} marks\n",
             all_threads, all_events, all_raw, all_bytes,
             all_bytes ? static_cast<double>(all_raw) / static_cast<double>(all_bytes) : 0.0,
             all_marks);
  return 0;
}

}  // namespace

void add_info_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Summarise processes, threads, sizes and rates");
  cmd->add_option("dir", options->dir, "Trace directory")->required();
  cmd->add_option("--pid", options->selection.pid, "Only this process");
  cmd->add_option("--tid", options->selection.tid, "Only this thread");
  cmd->callback([options, &exit_status] { exit_status = run_info(*options); });
}

}  // namespace parlot::tool
