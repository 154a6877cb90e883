#include "time_bound.h"

#include <fmt/core.h>

#include <algorithm>

namespace parlot::tool {

std::string TimeBound::text() const {
  if (logical) {
    return "logical clock (the trace has no clock samples): costs are event counts, not time";
  }
  if (exact) {
    return "exact: every event has its own clock sample (PARLOT_CLOCK_EVENTS=1)";
  }
  if (recorded) {
    return fmt::format(
        "every event within {:.3f} ms of its true time (the runtime's clock tick, its largest "
        "delay and the swing-door tolerance, as recorded); both ends of every MPI and library "
        "call within "
        "{:.3f} ms",
        static_cast<double>(recorded_bound_ns) / 1e6,
        static_cast<double>(recorded_tolerance_ns) / 1e6);
  }
  const double percent =
      events == 0 ? 100.0 : 100.0 * static_cast<double>(timed_events) / static_cast<double>(events);
  return fmt::format(
      "interpolated between clock samples ({:.1f}% of events have their own sample and are "
      "exact); any other event is off by less than the time between the samples around it, "
      "here at most {:.3f} ms",
      percent, static_cast<double>(max_span_ns) / 1e6);
}

TimeBound measure_time_bound(const std::vector<ProcessTrace>& processes,
                             const Selection& selection) {
  TimeBound bound;
  bool any = false, untimed = false;
  bool all_recorded = true;
  for (const auto& process : processes) {
    if (!selection.selects(process)) continue;
    const ProcessMetadata& m = process.metadata;
    if (m.clock_tick_ns.value_or(0) != 0 && m.clock_tolerance_ns) {
      bound.recorded_bound_ns =
          std::max(bound.recorded_bound_ns,
                   *m.clock_tick_ns + m.clock_tick_late_ns.value_or(0) + *m.clock_tolerance_ns);
      bound.recorded_tolerance_ns = std::max(bound.recorded_tolerance_ns, *m.clock_tolerance_ns);
    } else {
      all_recorded = false;
    }
    for (const auto& file : process.thread_files) {
      std::optional<ThreadEventReader> reader;
      try {
        reader.emplace(file);
      } catch (const FormatError&) {
        continue;
      }
      const ThreadTraceSummary& s = reader->summary();
      if (!selection.selects(s)) continue;
      any = true;
      const auto& samples = s.clock_samples;
      if (samples.size() < 2) untimed = true;
      // Events written so far: the counts of a finished file, else up to
      // the last sample (a live or killed file's tail is not bounded).
      const std::uint64_t n = s.trailer         ? s.trailer->events
                              : s.final_events  ? *s.final_events
                              : samples.empty() ? 0
                                                : samples.back().event_index;
      bound.events += n;
      std::uint64_t last_index = ~std::uint64_t{0};
      for (std::size_t i = 0; i < samples.size(); ++i) {
        const ClockSample& c = samples[i];
        if (c.event_index < n && c.event_index != last_index) ++bound.timed_events;
        last_index = c.event_index;
        if (i > 0 && c.event_index - samples[i - 1].event_index >= 2) {
          bound.max_span_ns = std::max(bound.max_span_ns, c.ns - samples[i - 1].ns);
        }
      }
    }
  }
  bound.logical = !any || untimed;
  bound.exact = !bound.logical && bound.timed_events == bound.events;
  bound.recorded = !bound.logical && !bound.exact && all_recorded;
  return bound;
}

}  // namespace parlot::tool
