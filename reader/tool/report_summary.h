// The answer-first view of `parlot-read report` (the default, `--by
// summary`): where the time goes (the split into computation, MPI
// communication, MPI waiting and I/O), the top functions by self time,
// each rank's split, load imbalance per function across ranks, and the
// same by thread for processes with several threads. Text or JSON.
#pragma once

#include <cstddef>
#include <string>

#include "analysis/time_stats.h"
#include "export/exporter.h"
#include "time_bound.h"

namespace parlot::tool {

/// What the summary is printed from.
struct SummaryInput {
  const analysis::TimeStats* stats = nullptr;
  TimeBound bound;
  exporter::TimeAxis axis;  ///< nanoseconds, or the logical clock (events)
  bool ranked = false;      ///< the processes are MPI ranks
  std::size_t top = 10;     ///< rows per list (0 = all)
};

/// The summary as text (tables, times in ms or events).
std::string summary_text(const SummaryInput& in);

/// The summary as one JSON object (every row, times as integers in the
/// axis' unit: "unit" is "ns" or "events"). The fields are listed in
/// parlot-read(1).
std::string summary_json(const SummaryInput& in);

}  // namespace parlot::tool
