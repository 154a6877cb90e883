// The interface every export format implements (one file per format in
// reader/export/), and what the walk over a trace hands to it. A format
// sees, in order: begin_process, then for each of that process's threads
// begin_thread, every event and mark, end_thread; then the next process; then end.
// Events arrive well nested (exits of frames still open at the end of a
// thread or of a --window are synthesised), so every format can assume it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parlot/call_stack_tracker.h"

namespace parlot::exporter {

/// What an event's time is measured in.
enum class TimeUnit : std::uint8_t {
  /// Logical clock: the event's index in its thread's stream (0 = first
  /// event). Used when the trace has no clock samples (format version 1).
  kEvents,
  /// Nanoseconds.
  kNanoseconds,
};

/// The clock of an export: every format says which one its times are on.
struct TimeAxis {
  TimeUnit unit = TimeUnit::kEvents;
  /// One line for headers and metadata fields, e.g. "logical clock: ...".
  std::string description =
      "logical clock: time = event index in the thread's stream (the trace has no time)";
  /// With kNanoseconds: the clock time (CLOCK_MONOTONIC ns) that is time 0
  /// of the export, the earliest clock sample of the exported threads.
  std::uint64_t origin_ns = 0;
  bool logical() const { return unit == TimeUnit::kEvents; }
};

/// The description of the real-time axis.
inline constexpr const char* kRealTimeDescription =
    "time in ns (CLOCK_MONOTONIC since the first clock sample of the exported threads), "
    "interpolated between clock samples: recorded with the default settings, an event within "
    "1.05 ms (clock tick plus tolerance), MPI and library calls' ends within 50 us";

/// Name, source file and line of one function of one process.
struct FunctionInfo {
  std::string name;  ///< demangled (and simplified with --simplify)
  std::string file;  ///< empty when unknown
  std::uint32_t line = 0;
};

/// Function ID -> FunctionInfo for the current process (IDs are per process).
class FunctionSource {
 public:
  virtual ~FunctionSource() = default;
  /// Info of function `id` (1-based). The reference stays valid until the
  /// source is destroyed.
  virtual const FunctionInfo& function(std::uint32_t id) = 0;
};

/// One traced process, as handed to begin_process.
struct ProcessInfo {
  std::uint64_t pid = 0;
  std::string rank;  ///< MPI rank, empty when none
  std::string executable;
  std::string host;
  std::uint64_t start_ns = 0;  ///< CLOCK_REALTIME, ns since the epoch
  /// Names of this process's function IDs; valid until the next
  /// begin_process or end.
  FunctionSource* functions = nullptr;
};

/// One thread of the current process, as handed to begin_thread.
struct ThreadInfo {
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
  std::uint64_t index = 0;  ///< order in which the process's threads started (0 = first)
};

/// Settings shared by every format.
struct ExportOptions {
  TimeAxis time;
  /// dot: keep only this many edges, the most called (0 = all).
  std::size_t top_edges = 0;
  /// folded: largest output (bytes) written; a larger export fails before
  /// writing (0 = no limit). Each line repeats its whole call path, so a
  /// deep recursion makes the file grow with the depth squared.
  std::uint64_t folded_max_bytes = 0;
};

/// One export format.
class Exporter {
 public:
  virtual ~Exporter() = default;
  virtual void begin_process(const ProcessInfo& process) = 0;
  virtual void begin_thread(const ThreadInfo& thread) = 0;
  /// `time`: on options.time's axis (event index, or ns since the process's start).
  virtual void event(const CallEvent& event, std::uint64_t time) = 0;
  /// A user mark (parlot_mark) of the current thread at `time`, between the
  /// events around it, with `depth` frames open there. `label`: the
  /// program's bytes, untrusted (escape them for the output). Formats with
  /// a time or event axis show it as a point event; the aggregating formats
  /// (call trees, graphs, profiles) ignore it: the default does nothing.
  virtual void mark(std::string_view label, std::uint32_t depth, std::uint64_t time) {
    (void)label, (void)depth, (void)time;
  }
  /// `end_time`: the time just after the thread's last event.
  virtual void end_thread(std::uint64_t end_time) = 0;
  /// Writes whatever is still buffered and closes the output. Throws
  /// std::runtime_error when the output cannot be written.
  virtual void end() = 0;
};

/// The formats, by the name `parlot-read export --format` takes.
/// Returns nullptr for an unknown name. `output`: the file (or, for otf2,
/// the archive directory) to write.
std::unique_ptr<Exporter> make_exporter(const std::string& format, const std::string& output,
                                        const ExportOptions& options);

/// Every format name make_exporter() knows, for usage messages.
const std::vector<std::string>& export_format_names();

}  // namespace parlot::exporter
