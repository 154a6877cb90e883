#include "event_columns.h"

#include <limits>

namespace parlot::python {

ThreadColumns::ThreadColumns(const std::filesystem::path& file, std::uint64_t function_count)
    : reader_(file), tracker_(function_count, file), samples_(reader_.summary().clock_samples) {}

void ThreadColumns::seek_segment() {
  // The same times as exporter::EventClock (reader/export/event_clock.h).
  const auto& first = samples_.front();
  const auto& last = samples_.back();
  slope_ = 0;
  if (index_ <= first.event_index) {
    segment_begin_ = index_;
    segment_end_ = first.event_index + 1;
    base_ns_ = first.ns;
    return;
  }
  if (index_ >= last.event_index) {
    segment_begin_ = index_;
    segment_end_ = std::numeric_limits<std::uint64_t>::max();
    base_ns_ = last.ns;
    return;
  }
  if (samples_[segment_].event_index > index_) segment_ = 0;
  while (samples_[segment_ + 1].event_index <= index_) ++segment_;
  const ClockSample& a = samples_[segment_];
  const ClockSample& b = samples_[segment_ + 1];
  segment_begin_ = a.event_index;
  segment_end_ = b.event_index;
  base_ns_ = a.ns;
  span_ = static_cast<double>(b.event_index - a.event_index);
  slope_ = static_cast<double>(b.ns - a.ns);
}

std::size_t ThreadColumns::read(const EventColumnsOut& out) {
  std::size_t n = 0;
  const bool timed = !samples_.empty();
  while (n < out.capacity) {
    if (pos_ == batch_.size()) {
      batch_ = reader_.next_batch();
      pos_ = 0;
      if (batch_.empty()) break;
    }
    const std::size_t take = std::min(batch_.size() - pos_, out.capacity - n);
    const std::uint32_t* ids = batch_.data() + pos_;
    for (std::size_t i = 0; i < take; ++i) {
      const CallEvent c = tracker_.push(ids[i]);
      out.function_id[n + i] = c.function_id;
      out.depth[n + i] = c.depth;
      out.enter[n + i] = c.kind == CallEvent::Kind::kEnter ? 1 : 0;
    }
    if (!timed) {
      for (std::size_t i = 0; i < take; ++i) out.time_ns[n + i] = -1;
    } else {
      for (std::size_t i = 0; i < take; ++i) {
        const std::uint64_t index = index_ + i;
        if (index >= segment_end_ || index < segment_begin_) [[unlikely]] {
          index_ += i;
          seek_segment();
          index_ -= i;
        }
        // As EventClock: a.ns + (b.ns - a.ns) * offset / span, in double.
        const auto offset = static_cast<double>(index - segment_begin_);
        const std::uint64_t t =
            slope_ == 0 ? base_ns_ : base_ns_ + static_cast<std::uint64_t>(slope_ * offset / span_);
        out.time_ns[n + i] = static_cast<std::int64_t>(t);
      }
    }
    pos_ += take;
    index_ += take;
    n += take;
  }
  return n;
}

}  // namespace parlot::python
