// One thread file of a job that may still be running, read as it grows
// (`parlot-read top`): refresh() reads the block headers the file gained
// (ThreadEventReader::refresh), update() decodes their events (the
// decoder's state kept), follows the open frames, and splits a window of
// time among the functions that were innermost in it. Cost per refresh:
// the new events only, plus the block headers the file gained; memory: the
// open frames and the functions met in the window.
#pragma once

#include <cstdint>
#include <filesystem>
#include <unordered_map>
#include <vector>

#include "parlot/trace_reader.h"

namespace parlot::tool {

class LiveThread {
 public:
  /// Opens `file` (a thread file, possibly without its final block).
  /// Throws FormatError when its header is bad.
  explicit LiveThread(const std::filesystem::path& file);

  /// Reads the block headers and clock samples the file gained (horizon()
  /// moves on). Throws FormatError on a malformed block.
  void refresh();

  /// Decodes the events of the blocks refresh() found whose time is known
  /// (those up to the last clock sample; all of them once the file is
  /// final), then splits
  /// the window [begin, end] (ns, the trace's CLOCK_MONOTONIC) among the
  /// functions innermost in it: each stretch between two events goes to the
  /// call open over it, the stretch after the last event to the call still
  /// open (the thread is taken to be in it until its next event arrives).
  /// Time outside any call is not counted. Throws FormatError on corrupt
  /// data.
  void update(std::uint64_t begin, std::uint64_t end);

  /// Function ID -> ns the function was innermost in the last update's window.
  const std::unordered_map<std::uint32_t, std::uint64_t>& window() const { return window_; }

  /// A call still open: function ID and the time of its entry (ns).
  struct Frame {
    std::uint32_t function;
    std::uint64_t entered;
  };
  /// The calls open after the events read so far, outermost first.
  const std::vector<Frame>& open() const { return open_; }

  /// Time of the newest clock sample (ns; 0 with none): how far the file's
  /// record of the thread reaches.
  std::uint64_t horizon() const;
  /// Events read so far.
  std::uint64_t events() const { return events_; }
  /// Whether the file has its final block and every event was read.
  bool finished() const;
  /// Whether the thread has clock samples (else times are event indices).
  bool timed() const { return !reader_.summary().clock_samples.empty(); }
  /// The thread's index in its process.
  std::uint64_t index() const { return reader_.summary().thread_index; }
  const ThreadTraceSummary& summary() const { return reader_.summary(); }

 private:
  /// Time of event `index` (interpolated between the samples around it;
  /// the event index itself without samples).
  std::uint64_t time_of(std::uint64_t index);
  /// Adds [from, to] clipped to [begin_, end_] to the innermost open call.
  void account(std::uint64_t from, std::uint64_t to);

  ThreadEventReader reader_;
  std::vector<std::uint32_t> pending_;  ///< decoded, not yet placed in time
  std::size_t pending_at_ = 0;
  std::uint64_t events_ = 0;     ///< events placed (processed)
  std::uint64_t last_time_ = 0;  ///< time of the last event placed
  std::size_t sample_at_ = 0;    ///< interpolation cursor into the samples
  std::vector<Frame> open_;
  std::unordered_map<std::uint32_t, std::uint64_t> window_;
  std::uint64_t begin_ = 0, end_ = 0;
};

}  // namespace parlot::tool
