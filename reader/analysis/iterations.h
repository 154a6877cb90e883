// The main iterations of a program's threads and what each one cost: a
// loop of time steps found by nested loop recognition (the outermost
// repeating loop, loops.h), or the intervals between the program's
// parlot_mark calls, or the calls of a function the user names. Each
// iteration of each unit (an MPI rank's main thread, or a thread) is timed
// and its time split by category (time_category.h) and by function; the
// iterations that stand out are explained by the unit whose own work grew,
// the function the extra time went to, and the other units' extra waiting
// in MPI. `parlot-read iterations` prints it; `reduce` segments by it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/event.h"
#include "analysis/time_category.h"

namespace parlot::analysis {

/// One event of a timed thread (16 bytes).
struct TimedEvent {
  std::uint32_t id = 0;    ///< entry: the process's function ID (never 0); exit: 0
  std::uint32_t key = 0;   ///< entry: the function's NameIndex key; exit: 0
  std::uint64_t time = 0;  ///< on the walk's time axis (ns, or event index)
  bool enter() const { return id != 0; }
};

/// A user mark (parlot_mark) of a timed thread.
struct TimedMark {
  std::uint64_t index = 0;  ///< index of the first event after it
  std::uint64_t time = 0;
  std::string label;
};

/// One thread's well-nested events with times (non-decreasing) and marks.
struct TimedThread {
  std::string name;  ///< "rank 1", "process 0 thread 2", ...
  std::vector<TimedEvent> events;
  std::vector<TimedMark> marks;
  std::uint64_t end_time = 0;  ///< just after the last event
};

/// Function names of a run by dense key (from 0), each with its category.
class NameIndex {
 public:
  /// The key of `name`, added on first sight.
  std::uint32_t key(std::string_view name);
  /// The key of `name`, or nullopt when it was never added.
  std::optional<std::uint32_t> find(std::string_view name) const;
  const std::string& name(std::uint32_t key) const { return names_[key]; }
  TimeCategory category(std::uint32_t key) const { return categories_[key]; }
  std::size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::vector<TimeCategory> categories_;
  std::unordered_map<std::string, std::uint32_t> keys_;
};

/// A stretch of a thread: events [first, end) and times [begin, finish).
struct Segment {
  std::size_t first = 0;
  std::size_t end = 0;
  std::uint64_t begin = 0;
  std::uint64_t finish = 0;
};

/// How to find a thread's iterations.
struct IterationChoice {
  /// The NameIndex key of a function whose calls start the iterations
  /// (`--loop FUNCTION`); unset: marks when the thread has two or more,
  /// else the outermost repeating loop.
  std::optional<std::uint32_t> loop;
};

/// A thread's iterations, in order, and how they were found.
struct Segmentation {
  std::vector<Segment> segments;
  /// "loop of FUNCTION" or "marks"; empty when none was found.
  std::string how;
};

/// The iterations of `thread` (events named by `names`). By marks: one
/// segment from each mark to the next. By a loop whose iterations start
/// with calls of function F at call depth d (the chosen loop's first call,
/// or `choice.loop` at the shallowest depth it is called): within the one
/// activation of their caller that makes most such calls, each iteration
/// runs from one call of F to the next; the last one over the calls at
/// depth d the one before made, while they are calls of the same functions
/// (so what follows the loop is left out), or to its caller's exit. The chosen loop is the one
/// of the thread's NLR summary (window `max_body`) that covers most events,
/// the outermost on ties. Fewer than two segments: no iterations.
Segmentation find_iterations(const TimedThread& thread, const NameIndex& names,
                             const IterationChoice& choice, std::size_t max_body = 8);

/// What one iteration of one unit cost. Times on the thread's axis.
struct IterationTime {
  bool present = false;
  std::uint64_t begin = 0;
  std::uint64_t duration = 0;
  /// Exclusive time by TimeCategory.
  std::array<std::uint64_t, kTimeCategories> category{};
  /// Exclusive time by function (NameIndex key), sorted by key.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> functions;
  /// Time not spent waiting in MPI: duration minus the MPI-waiting time.
  std::uint64_t work() const;
  /// Exclusive time of function `key` (0 when it was not called).
  std::uint64_t function_time(std::uint32_t key) const;
};

/// The cost of each of `segments` (sorted, not overlapping) of `thread`:
/// every stretch between two events counts for the innermost open call, in
/// the segment that holds the stretch's first event.
std::vector<IterationTime> time_segments(const TimedThread& thread, const NameIndex& names,
                                         const std::vector<Segment>& segments);

/// The iterations of every unit: times[u][k] is unit u's iteration k.
struct IterationTable {
  std::vector<std::string> units;
  std::vector<std::vector<IterationTime>> times;
  /// The most iterations any unit has.
  std::size_t iterations() const;
};

/// An iteration that stands out, with its cause. Times in the table's unit.
struct Standout {
  std::size_t iteration = 0;
  std::uint64_t time = 0;  ///< the iteration's time: its slowest unit's duration
  double median = 0;       ///< median of that time over the iterations
  double excess = 0;       ///< time - median
  std::size_t unit = 0;    ///< the unit whose own work grew most
  double work_excess = 0;  ///< its work minus its median work
  TimeCategory category = TimeCategory::kComputation;  ///< where its growth went
  std::optional<std::uint32_t> function;               ///< the function that grew most (key)
  double function_excess = 0;
  std::vector<std::size_t> waiters;            ///< other units that waited longer than usual
  double wait_excess = 0;                      ///< their mean extra MPI waiting
  std::optional<std::uint32_t> wait_function;  ///< where they waited most (key)
};

/// The iterations whose time exceeds the median by more than 3 scaled
/// median absolute deviations and by more than 5% of the median, largest
/// excess first, at most `top` (0 = all). Needs 3 iterations or more.
std::vector<Standout> find_standouts(const IterationTable& table, const NameIndex& names,
                                     std::size_t top);

/// One iteration over the units that have it: min, median and max of
/// their durations, and the slowest unit.
struct IterationSpread {
  std::size_t units = 0;
  std::uint64_t min = 0;
  double median = 0;
  std::uint64_t max = 0;
  std::size_t slowest = 0;
};

/// The spread of every iteration of `table`.
std::vector<IterationSpread> spread(const IterationTable& table);

/// The median of `v` (mean of the middle two when even); 0 when empty.
double median(std::vector<double> v);

}  // namespace parlot::analysis
