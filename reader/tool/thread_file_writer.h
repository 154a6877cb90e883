// Writes a thread file in the normal format (docs/FORMAT.md): the header,
// the events compressed with codec 2 (what the runtime writes) in data
// blocks of whole segments, the clock samples and
// marks as side records (each PAUX block ending with its checksum), the
// final block and the trailer. `parlot-read reduce` writes its kept
// segments with it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "parlot/format.h"

namespace parlot::tool {

/// What goes into one thread file.
struct ThreadFileContents {
  std::uint64_t tid = 0;
  std::uint64_t pid = 0;
  std::uint64_t thread_index = 0;
  std::uint64_t start_ns = 0;         ///< CLOCK_REALTIME at the first event
  std::uint64_t end_ns = 0;           ///< CLOCK_REALTIME at the end (trailer)
  std::vector<std::uint32_t> events;  ///< function IDs, 0 = exit; well nested
  /// Clock samples (event index, CLOCK_MONOTONIC ns), both non-decreasing;
  /// empty: no time.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> samples;
  /// Marks (index of the first event after it, label of at most 1024 bytes).
  std::vector<std::pair<std::uint64_t, std::string>> marks;
};

/// Writes `c` to `file` (replaced). Returns the file's size in bytes.
/// Throws std::runtime_error when it cannot be written.
std::uint64_t write_thread_file(const std::filesystem::path& file, const ThreadFileContents& c);

/// Clock samples for events at `times` (non-decreasing, one per event) and
/// the end at `end_time`: a subset of the points (i, times[i]) and (n,
/// end_time), first and last included, such that linear interpolation
/// between consecutive kept points is within `tolerance` of every point.
std::vector<std::pair<std::uint64_t, std::uint64_t>> thin_samples(
    const std::vector<std::uint64_t>& times, std::uint64_t end_time, std::uint64_t tolerance);

}  // namespace parlot::tool
