// How many events each call and loop body of a loop summary stands for,
// computed once over the summary (post-order, no expansion).
#pragma once

#include <cstdint>
#include <vector>

#include "loops.h"

namespace parlot::analysis {

/// Events per call ID and per body ID (one pass of the body) of a summary.
struct SummaryEvents {
  std::vector<std::uint64_t> call;  ///< entry, body and exit (no exit when open)
  std::vector<std::uint64_t> body;  ///< one iteration
  /// The events `i` stands for: a call's, or count x its body's for a loop.
  std::uint64_t of(const LoopSummary::Item& i) const {
    return i.loop ? i.count * body[i.id] : call[i.id];
  }
};

/// The event counts of every call and body of `summary` reachable from its
/// top level. O(calls + bodies + items).
SummaryEvents summary_events(const LoopSummary& summary);

}  // namespace parlot::analysis
