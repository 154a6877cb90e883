// The one-line summary `parlot record` prints: what the recorded program
// and its descendants left in the trace directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace parlot::frontend {

/// Totals over the process directories of one recording.
struct TraceSummary {
  std::vector<std::filesystem::path> process_dirs;  ///< the recording's process directories
  std::uint64_t threads = 0;
  std::uint64_t events = 0;              ///< events of complete thread files
  std::uint64_t raw_bytes = 0;           ///< the uncompressed word stream (2 or 4 bytes per event)
  std::uint64_t trace_bytes = 0;         ///< thread files' sizes on disk
  std::uint64_t incomplete_threads = 0;  ///< files without a trailer (counted in bytes only)
  /// raw_bytes / trace_bytes (0 when nothing was written).
  double ratio() const;
};

/// Names of the process directories now in `trace_dir` (empty if it does
/// not exist); a process of a node file is named "node-<n>.parlot/<process>".
std::set<std::string> process_dir_names(const std::filesystem::path& trace_dir);

/// Sums the process directories of `trace_dir` that are not in `before`
/// and belong to process `root_pid` or its descendants (by the pid and ppid
/// of their "process" files; an exec'd image keeps its pid). Unreadable
/// directories are skipped.
TraceSummary summarize_recording(const std::filesystem::path& trace_dir,
                                 const std::set<std::string>& before, std::uint64_t root_pid);

/// "3 processes, 5 threads, 1234 events, 2468 raw bytes, 345 trace bytes, ratio 7.2".
std::string describe(const TraceSummary& s);

}  // namespace parlot::frontend
