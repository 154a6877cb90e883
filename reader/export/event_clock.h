// Places a thread's events in time from its clock samples (format version
// 2): event k between samples (i0, t0) and (i1, t1), i0 <= k <= i1, is at
// t0 + (k - i0) (t1 - t0) / (i1 - i0), linear interpolation; the error is
// bounded by the samples' interval. Before the first sample, the first
// sample's time; after the last, the last's.
#pragma once

#include <cstdint>
#include <span>

#include "parlot/trace_reader.h"

namespace parlot::exporter {

class EventClock {
 public:
  /// `samples`: sorted by event index and time (ThreadEventReader checks).
  explicit EventClock(std::span<const ClockSample> samples) : samples_(samples) {}

  /// Time in ns (the samples' clock) of event `index`. Amortised O(1) when
  /// called with non-decreasing indices, which is how exports call it.
  std::uint64_t time(std::uint64_t index) {
    if (samples_.empty()) return 0;
    if (index <= samples_.front().event_index) return samples_.front().ns;
    if (index >= samples_.back().event_index) return samples_.back().ns;
    if (samples_[at_].event_index > index) at_ = 0;  // went back: restart
    while (samples_[at_ + 1].event_index <= index) ++at_;
    const ClockSample& a = samples_[at_];
    const ClockSample& b = samples_[at_ + 1];
    // b.event_index > index >= a.event_index here.
    const auto span = static_cast<double>(b.event_index - a.event_index);
    const auto offset = static_cast<double>(index - a.event_index);
    return a.ns + static_cast<std::uint64_t>(static_cast<double>(b.ns - a.ns) * offset / span);
  }

 private:
  std::span<const ClockSample> samples_;
  std::size_t at_ = 0;
};

}  // namespace parlot::exporter
