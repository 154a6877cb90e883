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
  for (const auto& process : processes) {
    if (!selection.selects(process)) continue;
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
  return bound;
}

}  // namespace parlot::tool
