#include "export_walk.h"

#include <algorithm>
#include <exception>

#include "event_clock.h"
#include "parlot/mark_cursor.h"
#include "valid_utf8.h"

namespace parlot::exporter {

std::uint64_t export_thread(ThreadEventReader& reader, std::uint64_t function_count,
                            const EventWindow& window, const TimeAxis& time, Exporter& exporter,
                            analysis::FilterStage* filter) {
  const auto& s = reader.summary();
  EventClock clock(s.clock_samples);
  auto time_of = [&](std::uint64_t index) {
    if (time.logical()) return index;
    const std::uint64_t t = clock.time(index);
    return t > time.origin_ns ? t - time.origin_ns : 0;
  };
  exporter.begin_thread({s.pid, s.tid, s.thread_index});
  CallStackTracker tracker(function_count, s.path);
  std::uint64_t index = 0;
  std::uint64_t exported = 0;
  bool started = false;
  // Every event the exporter sees, through the filter when there is one.
  auto emit = [&](const CallEvent& e, std::uint64_t t) {
    CallEvent kept;
    if (filter == nullptr) {
      exporter.event(e, t);
    } else if (filter->push(e, kept)) {
      exporter.event(kept, t);
    } else {
      return;
    }
    ++exported;
  };
  auto depth = [&] {
    return filter ? filter->depth() : static_cast<std::uint32_t>(tracker.open_calls().size());
  };
  auto open_window = [&] {
    const auto& open = tracker.open_calls();
    for (std::size_t d = 0; d < open.size(); ++d) {
      emit({CallEvent::Kind::kEnter, open[d], static_cast<std::uint32_t>(d),
            d == 0 ? 0u : open[d - 1]},
           time_of(index));
    }
    started = true;
  };
  MarkCursor marks(s.marks);
  marks.skip_before(window.begin);
  // A label is the program's bytes: every format gets valid UTF-8.
  auto mark = [&](const Mark& m) { exporter.mark(valid_utf8(m.label), depth(), time_of(index)); };
  bool done = false;
  // Damaged event data ends the thread where it is found: its open frames
  // are closed there, as at a window's end, so the export stays well
  // formed; then the error goes to the caller.
  std::exception_ptr damage;
  try {
    for (auto batch = reader.next_batch(); !batch.empty() && !done; batch = reader.next_batch()) {
      for (const std::uint32_t id : batch) {
        if (index >= window.end) {
          done = true;
          break;
        }
        if (index == window.begin) open_window();
        if (started && marks.due(index)) [[unlikely]] {
          marks.visit_until(index, mark);
        }
        const CallEvent e = tracker.push(id);
        if (started) emit(e, time_of(index));
        ++index;
      }
    }
  } catch (const FormatError&) {
    damage = std::current_exception();
    done = true;  // the marks after the damage are not placed
  }
  const std::uint64_t end_time = time_of(std::min(index, window.end));
  if (!started && index == window.begin && index < window.end) open_window();  // starts at the end
  if (started && !done) marks.visit_rest(mark);  // the window reaches the stream's end
  if (started) {
    const auto open = tracker.open_calls();
    for (std::size_t d = open.size(); d-- > 0;) {
      emit({CallEvent::Kind::kExit, open[d], static_cast<std::uint32_t>(d),
            d == 0 ? 0u : open[d - 1]},
           end_time);
    }
  }
  exporter.end_thread(end_time);
  if (damage) std::rethrow_exception(damage);
  return exported;
}

}  // namespace parlot::exporter
