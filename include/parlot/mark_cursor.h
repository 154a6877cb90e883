// Walks a thread's user marks (ThreadTraceSummary::marks) alongside its
// event stream, so every view places each mark just before the event it
// precedes, and the marks beyond the last event after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "parlot/trace_reader.h"

namespace parlot {

class MarkCursor {
 public:
  /// `marks`: sorted by event index (as ThreadEventReader leaves them); the
  /// span must outlive the cursor.
  explicit MarkCursor(std::span<const Mark> marks) : marks_(marks) { update(); }

  /// True when a mark not yet visited sits before event `index` (its
  /// event_index <= index). One comparison when none is due: cheap enough
  /// for every event.
  bool due(std::uint64_t index) const { return index >= next_index_ && next_ < marks_.size(); }

  /// Calls `on_mark(const Mark&)` for each mark not yet visited whose
  /// event index is <= `index`, in order.
  template <class OnMark>
  void visit_until(std::uint64_t index, OnMark&& on_mark) {
    while (due(index)) {
      on_mark(marks_[next_++]);
      update();
    }
  }

  /// Calls `on_mark` for every mark not yet visited (the end of the stream).
  template <class OnMark>
  void visit_rest(OnMark&& on_mark) {
    visit_until(std::numeric_limits<std::uint64_t>::max(), on_mark);
  }

  /// Passes over the marks whose event index is < `index` without visiting
  /// them (the start of an export window).
  void skip_before(std::uint64_t index) {
    while (next_ < marks_.size() && marks_[next_].event_index < index) ++next_;
    update();
  }

 private:
  void update() {
    next_index_ = next_ < marks_.size() ? marks_[next_].event_index
                                        : std::numeric_limits<std::uint64_t>::max();
  }

  std::span<const Mark> marks_;
  std::size_t next_ = 0;
  std::uint64_t next_index_ = 0;  // event index of marks_[next_], or max when none is left
};

}  // namespace parlot
