// Time statistics organised as users think of a parallel program (Li and
// Zhang's program -> process -> thread -> function statistics): per
// function calls, inclusive and exclusive time; per thread and process the
// split of time into computation, MPI communication, MPI waiting and I/O
// (time_category.h); and load imbalance of each function across processes
// and across the threads of a process. Built from call-event streams with
// times (ThreadTimeBuilder), never from files; `parlot-read report` prints
// it and tests check it against what fixtures measure themselves.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/time_category.h"

namespace parlot::analysis {

/// Calls and time of one function (in one thread, or summed).
struct FunctionTime {
  std::uint64_t calls = 0;
  /// Time of its outermost activations, callees included (a recursive
  /// call inside another activation of the same function adds nothing).
  std::uint64_t inclusive = 0;
  std::uint64_t exclusive = 0;  ///< time in the function itself, callees excluded
  void add(const FunctionTime& o) {
    calls += o.calls;
    inclusive += o.inclusive;
    exclusive += o.exclusive;
  }
};

/// Time of one thread, or of a group of threads (a process, the program).
/// Times are in the unit of the events' times (ns, or events on the
/// logical clock).
struct TimeProfile {
  std::array<std::uint64_t, kTimeCategories> category{};  ///< by TimeCategory
  std::vector<FunctionTime> functions;                    ///< by TimeStats function key
  /// Time inside the outermost calls: the sum of `category`.
  std::uint64_t total() const;
  /// Adds `o` (function keys of the same TimeStats).
  void add(const TimeProfile& o);
};

/// Builds one thread's TimeProfile from its well-nested events with
/// non-decreasing times: each stretch of time between two events is the
/// exclusive time of the innermost open call, and counts in its category.
class ThreadTimeBuilder {
 public:
  /// An entry into function `key` (a TimeStats key) of category `c` at `time`.
  void enter(std::uint32_t key, TimeCategory c, std::uint64_t time);
  /// The exit of the innermost open call at `time`; ignored when none is open.
  void exit(std::uint64_t time);
  /// Exits every open call at `time`, then returns the profile and starts
  /// over empty.
  TimeProfile finish(std::uint64_t time);

 private:
  struct Open {
    std::uint32_t key;
    TimeCategory category;
    std::uint64_t entered;
    std::uint64_t callees;  ///< inclusive time of the calls it made so far
  };
  std::vector<Open> open_;
  std::vector<std::uint32_t> active_;  ///< by key: open activations
  TimeProfile profile_;
};

/// How unevenly a function's exclusive time is spread over the members of
/// a group (the processes of a run, the threads of a process) that called it.
struct Imbalance {
  std::uint32_t function = 0;  ///< TimeStats key
  std::uint64_t max = 0;       ///< the slowest member's time
  double mean = 0;             ///< mean over the members that called it
  std::size_t members = 0;     ///< members that called it
  std::size_t slowest = 0;     ///< index of the slowest member in the group (first on ties)
  /// max / mean (1 = balanced); 0 when mean is 0.
  double ratio() const { return mean > 0 ? static_cast<double>(max) / mean : 0; }
  /// Time the other members wait for the slowest, on average: max - mean.
  double excess() const { return static_cast<double>(max) - mean; }
};

/// One process of a run and its threads.
struct ProcessTime {
  std::string name;                       ///< "rank R" (MPI runs) or "process K"
  std::vector<std::string> thread_names;  ///< "rank R thread I", ...
  std::vector<TimeProfile> threads;
  TimeProfile total;  ///< sum of its threads
};

/// The statistics of a run: processes in order, functions merged by name.
class TimeStats {
 public:
  /// The key of function `name` (added on first sight). Keys are dense
  /// from 0.
  std::uint32_t key(std::string_view name);
  const std::vector<std::string>& names() const { return names_; }

  /// Starts a process named `name` ("rank 2").
  void begin_process(std::string name);
  /// Adds a thread of the current process (begin_process first).
  void add_thread(std::string name, TimeProfile profile);

  const std::vector<ProcessTime>& processes() const { return processes_; }
  /// Every thread of every process summed.
  TimeProfile program() const;

  /// Per function that any member called: its imbalance across `members`,
  /// sorted by excess (max - mean) descending, then by key.
  static std::vector<Imbalance> imbalance(const std::vector<const TimeProfile*>& members);

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> keys_;
  std::vector<ProcessTime> processes_;
};

}  // namespace parlot::analysis
