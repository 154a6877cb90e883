// One thread's events decoded into columns (function ID, depth, kind, time)
// a chunk at a time, for numpy arrays without a Python object per event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "parlot/call_stack_tracker.h"
#include "parlot/trace_reader.h"

namespace parlot::python {

/// Column pointers a chunk of events is written to (each with room for
/// `capacity` values).
struct EventColumnsOut {
  std::uint32_t* function_id = nullptr;  ///< the function entered or left (process's ID)
  std::uint32_t* depth = nullptr;        ///< 0 = the thread's outermost frame
  std::uint8_t* enter = nullptr;         ///< 1 = entry, 0 = exit
  std::int64_t* time_ns = nullptr;       ///< CLOCK_MONOTONIC ns (see ThreadColumns)
  std::size_t capacity = 0;
};

/// Streams the events of one thread file, well nested and with depths, as
/// `parlot-read trace` shows them (the exits the runtime added at the end
/// included), in constant memory (one block of the file).
class ThreadColumns {
 public:
  /// Opens `file`; `function_count`: IDs 1..function_count are valid (0:
  /// no function table, any ID accepted). Throws FormatError on a bad
  /// header; a file cut short opens (damage() says where it ends).
  ThreadColumns(const std::filesystem::path& file, std::uint64_t function_count);

  /// Writes the next up to out.capacity events into `out`; returns how many
  /// (0 at the end). An event's time is interpolated linearly between the
  /// thread's clock samples (before the first sample: its time; after the
  /// last: its time), in CLOCK_MONOTONIC ns; -1 when the thread has no clock
  /// samples (format version 1, PARLOT_CLOCK_EVENTS=0). Throws FormatError
  /// (file and offset) on corrupt data or a stream that is not well nested.
  std::size_t read(const EventColumnsOut& out);

  /// Whether the thread has clock samples (times are known).
  bool timed() const { return !samples_.empty(); }
  const ThreadTraceSummary& summary() const { return reader_.summary(); }
  /// Events returned so far.
  std::uint64_t events_read() const { return index_; }

 private:
  /// Moves segment_ to the clock-sample interval holding event `index_`
  /// and sets the interpolation (base_ns_, slope_, segment_end_).
  void seek_segment();

  ThreadEventReader reader_;
  CallStackTracker tracker_;
  std::span<const ClockSample> samples_;
  std::span<const std::uint32_t> batch_;
  std::size_t pos_ = 0;
  std::uint64_t index_ = 0;
  // The current interpolation segment: events [segment_begin_, segment_end_)
  // are at base_ns_ + (index - segment_begin_) * slope_.
  std::size_t segment_ = 0;
  std::uint64_t segment_begin_ = 0;
  std::uint64_t segment_end_ = 0;
  std::uint64_t base_ns_ = 0;
  double slope_ = 0;  // b.ns - a.ns (0: constant time)
  double span_ = 1;   // b.event_index - a.event_index
};

}  // namespace parlot::python
