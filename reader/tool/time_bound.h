// How far `parlot-read report` can be trusted: the error bound of the
// events' times, from the clock settings the runtime recorded in each
// process file (tick period plus swing-door tolerance), else from the
// clock samples the trace holds (traces of older runtimes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parlot/trace_reader.h"
#include "thread_walk.h"

namespace parlot::tool {

/// The time bound of the selected threads' events.
struct TimeBound {
  bool logical = true;  ///< some thread has no clock samples: costs are event counts
  /// Every event has a clock sample at its own index (PARLOT_CLOCK_EVENTS=1):
  /// times exact to the clock's reading.
  bool exact = false;
  std::uint64_t events = 0;        ///< events of the selected threads (as far as written)
  std::uint64_t timed_events = 0;  ///< events with a sample at their own index
  /// Largest time (ns) between two consecutive samples with an event
  /// between them (an interpolated event is off by less than this); 0 when
  /// exact.
  std::uint64_t max_span_ns = 0;
  /// Every selected process recorded a clock tick (process file keys
  /// clock_tick_ns, clock_tolerance_ns): an event's time is then right to
  /// within `recorded_bound_ns` (the largest tick + tolerance), an MPI or
  /// library call's ends within `recorded_tolerance_ns`.
  bool recorded = false;
  std::uint64_t recorded_bound_ns = 0;
  std::uint64_t recorded_tolerance_ns = 0;

  /// One line for the report's header, e.g. "exact: every event has its
  /// own clock sample (PARLOT_CLOCK_EVENTS=1)".
  std::string text() const;
};

/// The bound of the threads `selection` selects in `processes`, from each
/// thread file's clock samples (its summary; no event is decoded). Files
/// that cannot be opened are skipped (the walk reports them).
TimeBound measure_time_bound(const std::vector<ProcessTrace>& processes,
                             const Selection& selection);

}  // namespace parlot::tool
