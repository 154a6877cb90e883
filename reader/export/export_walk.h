// Feeds one thread's events to an Exporter, well nested: the frames open at
// the start of a window are entered at its first event, and every frame
// still open at the end of the window or of the stream (a file cut short) is
// closed at the end time.
#pragma once

#include <cstdint>
#include <limits>

#include "analysis/filter.h"
#include "exporter.h"
#include "parlot/trace_reader.h"

namespace parlot::exporter {

/// A range of event indices of a thread's stream: [begin, end).
struct EventWindow {
  std::uint64_t begin = 0;
  std::uint64_t end = std::numeric_limits<std::uint64_t>::max();
};

/// Calls exporter.begin_thread, event (for each event of `reader` in
/// `window`, with its time), mark (for each of the thread's marks in the
/// window, just before the event it precedes; those beyond the stream's
/// last event after it, when the window reaches the end) and end_thread. Times on `time`'s axis:
/// event indices on the logical clock, else ns since time.origin_ns interpolated from the thread's
/// clock samples (EventClock). `function_count`: IDs 1..function_count are valid (0 = unknown).
/// With `filter` (fresh, not yet fed), every event, synthesised ones included, goes through it
/// first: a dropped function's callees nest under its nearest kept caller, and marks carry the
/// filtered depth (analysis/filter.h). Returns the events handed to the exporter, synthesised ones
/// included (marks not counted). Throws FormatError on corrupt data, like CallStackTracker, after
/// ending the thread there (its open frames closed at the last good event's time, end_thread), so
/// the exporter's output stays well formed and may go on with other threads.
std::uint64_t export_thread(ThreadEventReader& reader, std::uint64_t function_count,
                            const EventWindow& window, const TimeAxis& time, Exporter& exporter,
                            analysis::FilterStage* filter = nullptr);

}  // namespace parlot::exporter
