#include "export_walk.h"

#include <algorithm>

namespace parlot::exporter {

std::uint64_t export_thread(ThreadEventReader& reader, std::uint64_t function_count,
                            const EventWindow& window, Exporter& exporter) {
  const auto& s = reader.summary();
  exporter.begin_thread({s.pid, s.tid, s.thread_index});
  CallStackTracker tracker(function_count, s.path);
  std::uint64_t index = 0;
  std::uint64_t exported = 0;
  bool started = false;
  auto open_window = [&] {
    const auto& open = tracker.open_calls();
    for (std::size_t d = 0; d < open.size(); ++d) {
      exporter.event({CallEvent::Kind::kEnter, open[d], static_cast<std::uint32_t>(d),
                      d == 0 ? 0u : open[d - 1]},
                     index);
      ++exported;
    }
    started = true;
  };
  bool done = false;
  for (auto batch = reader.next_batch(); !batch.empty() && !done; batch = reader.next_batch()) {
    for (const std::uint32_t id : batch) {
      if (index >= window.end) {
        done = true;
        break;
      }
      if (index == window.begin) open_window();
      const CallEvent e = tracker.push(id);
      if (started) {
        exporter.event(e, index);
        ++exported;
      }
      ++index;
    }
  }
  const std::uint64_t end_time = std::min(index, window.end);
  if (started) {
    const auto open = tracker.open_calls();
    for (std::size_t d = open.size(); d-- > 0;) {
      exporter.event({CallEvent::Kind::kExit, open[d], static_cast<std::uint32_t>(d),
                      d == 0 ? 0u : open[d - 1]},
                     end_time);
      ++exported;
    }
  }
  exporter.end_thread(end_time);
  return exported;
}

}  // namespace parlot::exporter
