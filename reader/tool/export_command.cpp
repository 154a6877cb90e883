// parlot-read export: writes the trace in a format other tools read (one
// file per format in reader/export/). This file holds the options and the
// walk over processes and threads; the formats know nothing of files.
#include <fmt/core.h>

#include <deque>
#include <limits>
#include <memory>
#include <optional>

#include "commands.h"
#include "export/export_walk.h"
#include "export/exporter.h"
#include "export/simplify_name.h"
#include "export/valid_utf8.h"
#include "export_trace.h"
#include "function_names.h"
#include "progress.h"
#include "thread_walk.h"
#include "trace_input.h"

namespace parlot::tool {
namespace {

/// Chrome's trace viewer and Perfetto UI's JSON importer fail well below
/// 10^8 events (uftrace issues 706, 1920, 2021): larger chrome exports are
/// refused unless narrowed.
constexpr std::uint64_t kChromeMaxEvents = 10'000'000;

/// Largest folded export written (bytes): 1 GiB, far beyond what
/// flamegraph.pl or a browser-based viewer reads in reasonable time.
constexpr std::uint64_t kFoldedMaxBytes = std::uint64_t{1} << 30;

struct ExportCommandOptions {
  std::string dir;
  std::string format;
  std::string output;
  Selection selection;
  analysis::FunctionFilter filter;
  std::string window;
  std::size_t top = 50;
  std::uint64_t chrome_limit = kChromeMaxEvents;
  std::uint64_t folded_limit = kFoldedMaxBytes;
  bool simplify = false;
};

/// FunctionNames as the exporters see them: plain names, simplified on request.
class NamedFunctions final : public exporter::FunctionSource {
 public:
  NamedFunctions(const ProcessTrace& process, bool simplify)
      : names_(process), simplify_(simplify), infos_(process.function_addresses.size()) {}

  /// The process's symbolizer (names as the filters match them).
  FunctionNames& names() { return names_; }

  const exporter::FunctionInfo& function(std::uint32_t id) override {
    if (const exporter::FunctionInfo* cached = infos_.find(id)) return *cached;
    const SourceLocation& loc = names_.lookup(id);
    // Names and paths are arbitrary bytes: every format gets valid UTF-8.
    return infos_.put(
        id,
        {exporter::printable_utf8(simplify_ ? exporter::simplify_name(loc.function) : loc.function),
         exporter::printable_utf8(loc.file),
         static_cast<std::uint32_t>(loc.line < 0 ? 0 : loc.line)});
  }

 private:
  FunctionNames names_;
  bool simplify_;
  IdCache<exporter::FunctionInfo> infos_;
};

/// "BEGIN:END" (event indices, either side may be empty) -> window.
exporter::EventWindow parse_window(const std::string& text) {
  exporter::EventWindow w;
  if (text.empty()) return w;
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    throw CLI::ValidationError("--window", "expected BEGIN:END (event indices), got " + text);
  }
  try {
    if (colon > 0) w.begin = std::stoull(text.substr(0, colon));
    if (colon + 1 < text.size()) w.end = std::stoull(text.substr(colon + 1));
  } catch (const std::exception&) {
    throw CLI::ValidationError("--window", "expected BEGIN:END (event indices), got " + text);
  }
  if (w.end <= w.begin) throw CLI::ValidationError("--window", "END must be above BEGIN");
  return w;
}

}  // namespace

std::uint64_t promised_events(const std::vector<ProcessTrace>& processes,
                              const Selection& selection, const exporter::EventWindow& w) {
  std::uint64_t total = 0;
  for (const auto& process : processes) {
    if (!selection.selects(process)) continue;
    for (const auto& file : process.thread_files) {
      try {
        ThreadEventReader reader(file);
        const auto& s = reader.summary();
        if (!selection.selects(s)) continue;
        const std::uint64_t n = s.trailer ? s.trailer->events : s.final_events.value_or(0);
        const std::uint64_t end = std::min(n, w.end);
        total += end > w.begin ? end - w.begin : 0;
      } catch (const FormatError&) {
        // Promises nothing; reported where it is read.
      }
    }
  }
  return total;
}

exporter::TimeAxis choose_time_axis(const std::vector<ProcessTrace>& processes,
                                    const Selection& selection) {
  exporter::TimeAxis axis;
  std::uint64_t origin = ~std::uint64_t{0};
  bool any = false;
  for (const auto& process : processes) {
    if (!selection.selects(process)) continue;
    for (const auto& file : process.thread_files) {
      std::optional<ThreadEventReader> reader;
      try {
        reader.emplace(file);
      } catch (const FormatError&) {
        continue;  // left out of the export, reported there
      }
      const auto& s = reader->summary();
      if (!selection.selects(s)) continue;
      if (s.clock_samples.size() < 2) return axis;  // one thread without time: logical
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

int export_trace(const std::vector<ProcessTrace>& processes, const Selection& selection,
                 const exporter::EventWindow& window, const exporter::TimeAxis& time, bool simplify,
                 const analysis::FunctionFilter& filter, exporter::Exporter& out) {
  int status = 0;
  const analysis::FunctionMatcher matcher(filter);
  // The progress bar's total: decoding runs from each thread's start to the
  // window's end.
  add_promised_events(promised_events(processes, selection, {0, window.end}));
  std::deque<NamedFunctions> names;  // each process's, alive until the end
  for (const auto& process : processes) {
    if (!selection.selects(process)) continue;
    NamedFunctions& functions = names.emplace_back(process, simplify);
    const auto& m = process.metadata;
    out.begin_process({m.pid, exporter::printable_utf8(m.rank),
                       exporter::printable_utf8(m.executable), exporter::printable_utf8(m.host),
                       m.start_ns, &functions});
    // The process's filter, copied fresh for each thread.
    std::optional<analysis::FilterStage> process_filter;
    if (!filter.keeps_everything()) {
      process_filter.emplace(keep_vector(process, functions.names(), matcher), filter.max_depth);
    }
    for (const auto& file : process.thread_files) {
      // A thread whose file cannot be opened is left out; one damaged in
      // its event data is exported up to the damage (export_thread closes
      // its open frames there). Either is reported once, at the end.
      std::optional<ThreadEventReader> reader;
      try {
        reader.emplace(file);
      } catch (const FormatError& e) {
        report_error(e);
        status = 1;
        continue;
      }
      if (!selection.selects(reader->summary())) continue;
      std::optional<analysis::FilterStage> thread_filter = process_filter;
      try {
        exporter::export_thread(*reader, process.function_addresses.size(), window, time, out,
                                thread_filter ? &*thread_filter : nullptr);
        status |= report_damage(reader->summary());
      } catch (const FormatError& e) {
        report_error(e);
        status = 1;
      }
    }
  }
  out.end();
  return status;
}

namespace {

int run_export(const ExportCommandOptions& o) {
  const exporter::EventWindow window = parse_window(o.window);
  const analysis::FunctionMatcher check(o.filter);  // a bad pattern fails before the output opens
  const auto processes = open_run(o.dir, o.selection);
  exporter::ExportOptions options;
  options.top_edges = o.top;
  options.folded_max_bytes = o.folded_limit;
  options.time = choose_time_axis(processes, o.selection);
  if (o.format == "chrome") {
    const std::uint64_t events = promised_events(processes, o.selection, window);
    if (events > o.chrome_limit) {
      fmt::print(stderr,
                 "parlot-read: error: a chrome export of {} events would not open in a browser "
                 "(limit about {}); narrow it with --window BEGIN:END (event indices) or "
                 "--tid T, or use --format perfetto\n",
                 events, o.chrome_limit);
      return 1;
    }
  }
  auto out = exporter::make_exporter(o.format, o.output, options);
  if (options.time.logical()) {
    fmt::print(stderr, "parlot-read: note: {}\n", options.time.description);
    if (o.format == "folded") {
      fmt::print(stderr, "parlot-read: note: folded weights are calls per call path\n");
    }
  }
  export_trace(processes, o.selection, window, options.time, o.simplify, o.filter, *out);
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<ExportCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write the trace for other viewers (Chrome/Perfetto, speedscope, flame graphs, "
      "KCachegrind, Graphviz, Hatchet)");
  cmd->add_option("dir", options->dir, "Trace directory")->required();
  cmd->add_option("--format,-f", options->format, "Output format")
      ->required()
      ->check(CLI::IsMember(exporter::export_format_names()));
  cmd->add_option("--output,-o", options->output, "Output file (- = standard output)")->required();
  cmd->add_option("--pid", options->selection.pid, "Only this process");
  cmd->add_option("--tid", options->selection.tid, "Only this thread");
  add_filter_options(cmd, options->filter);
  cmd->add_option("--window", options->window,
                  "Only events BEGIN:END of each thread (event indices, END excluded); frames "
                  "open at BEGIN are entered there, frames open at END closed there");
  cmd->add_option("--top", options->top, "dot: keep the N most called edges (0 = all)")
      ->capture_default_str();
  cmd->add_option("--chrome-limit", options->chrome_limit,
                  "chrome: refuse exports of more events than this (browsers fail beyond ~10^7)")
      ->capture_default_str();
  cmd->add_option("--folded-limit", options->folded_limit,
                  "folded: refuse exports larger than this many bytes (0 = no limit); each line "
                  "repeats its whole call path, so deep recursions grow with the depth squared")
      ->capture_default_str();
  cmd->add_flag("--simplify", options->simplify,
                "Shorter C++ names: template arguments collapsed, std-library noise removed");
  cmd->callback([options, &exit_status] { exit_status = run_export(*options); });
}

}  // namespace parlot::tool
