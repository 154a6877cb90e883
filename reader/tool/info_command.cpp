// parlot-read info: processes and threads of a trace directory with events,
// raw and trace bytes, compression ratio, duration and bandwidth (the
// paper's §4.2 metrics).
#include <fmt/core.h>

#include <optional>
#include <system_error>

#include "commands.h"
#include "function_names.h"
#include "library_calls_text.h"
#include "thread_walk.h"
#include "visible_text.h"

namespace parlot::tool {
namespace {

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
      all_events += events;
      all_raw += raw;
      all_bytes += s.file_bytes;
      ++all_threads;
    }
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
