#include "live_thread.h"

#include <algorithm>

namespace parlot::tool {

LiveThread::LiveThread(const std::filesystem::path& file) : reader_(file) {}

std::uint64_t LiveThread::horizon() const {
  const auto& samples = reader_.summary().clock_samples;
  return samples.empty() ? events_ : samples.back().ns;
}

bool LiveThread::finished() const {
  const auto& s = reader_.summary();
  return s.final_events && events_ == *s.final_events;
}

std::uint64_t LiveThread::time_of(std::uint64_t index) {
  const auto& samples = reader_.summary().clock_samples;
  if (samples.empty()) return index;
  if (index <= samples.front().event_index) return samples.front().ns;
  if (index >= samples.back().event_index) return samples.back().ns;
  // Indices only grow: the cursor moves forward.
  while (samples[sample_at_ + 1].event_index <= index) ++sample_at_;
  const ClockSample& a = samples[sample_at_];
  const ClockSample& b = samples[sample_at_ + 1];
  const auto span = static_cast<double>(b.event_index - a.event_index);
  const auto offset = static_cast<double>(index - a.event_index);
  return a.ns + static_cast<std::uint64_t>(static_cast<double>(b.ns - a.ns) * offset / span);
}

void LiveThread::account(std::uint64_t from, std::uint64_t to) {
  if (open_.empty()) return;
  from = std::max(from, begin_);
  to = std::min(to, end_);
  if (to > from) window_[open_.back().function] += to - from;
}

void LiveThread::refresh() {
  reader_.refresh();
}

void LiveThread::update(std::uint64_t begin, std::uint64_t end) {
  begin_ = begin;
  end_ = end;
  window_.clear();
  const auto& s = reader_.summary();
  // Events up to the last sample have a time; later ones wait for the next
  // sample (the runtime takes one at every flush, so they rarely wait).
  const bool final = s.final_events.has_value();
  const std::uint64_t placeable =
      final || s.clock_samples.empty() ? ~std::uint64_t{0} : s.clock_samples.back().event_index;
  for (;;) {
    if (pending_at_ == pending_.size()) {
      pending_.clear();
      pending_at_ = 0;
      const auto batch = reader_.next_batch();
      if (batch.empty()) break;
      pending_.assign(batch.begin(), batch.end());
    }
    if (events_ > placeable) break;
    const std::uint32_t id = pending_[pending_at_];
    const std::uint64_t t = std::max(time_of(events_), last_time_);
    account(last_time_, t);
    if (id == 0) {
      if (open_.empty()) {
        throw FormatError(s.path, events_,
                          "exit with no open call at event " + std::to_string(events_) +
                              " (offset given in events)");
      }
      open_.pop_back();
    } else {
      open_.push_back({id, t});
    }
    last_time_ = t;
    ++pending_at_;
    ++events_;
  }
  account(last_time_, end);
}

}  // namespace parlot::tool
