// Similarity-based trace reduction (Mohror and Karavanic, SC 2009, section
// 3): a thread's iterations are its segments; each new segment is compared
// with the representatives kept so far that have exactly the same events
// (same function IDs in the same order), and either matches the first one
// within the metric's threshold (similarity.h) or becomes a representative
// itself. `parlot-read reduce` writes only the representatives.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/iterations.h"
#include "analysis/similarity.h"

namespace parlot::analysis {

/// The measurement vector of `segment` of `thread`: every event's time
/// relative to the segment's begin, then the segment's length.
std::vector<double> measurements(const TimedThread& thread, const Segment& segment);

/// True when `segment`'s events are whole calls: the call depth never goes
/// below its depth at the start and is back to it at the end (only such
/// segments can be left out of a well-nested stream).
bool whole_calls(const TimedThread& thread, const Segment& segment);

/// The reduction of one thread's segments.
struct ThreadReduction {
  /// For each segment, the segment that represents it (itself when kept).
  std::vector<std::size_t> representative;
  /// For each kept segment, the measurement vector written for it (its own;
  /// iter_avg: the mean over the segments it represents); empty for the
  /// others.
  std::vector<std::vector<double>> written;
  std::size_t kept = 0;        ///< representatives
  std::size_t signatures = 0;  ///< distinct event sequences among the segments
  /// |recreated time - true time| of every measurement of every segment,
  /// the recreated time being its representative's (approximation distance).
  std::vector<double> errors;
};

/// Reduces `segments` of `thread` with `metric` and `threshold` (iter_k:
/// k = threshold, at least 1; the segments beyond the first k of a kind are
/// represented by the last one kept, as the seed recreates them). Segments
/// that are not whole calls are always kept.
ThreadReduction reduce_segments(const TimedThread& thread, const std::vector<Segment>& segments,
                                Metric metric, double threshold);

/// The value below which `fraction` (0..1) of `v` lie (nearest rank); 0
/// when empty.
double percentile(std::vector<double> v, double fraction);

}  // namespace parlot::analysis
