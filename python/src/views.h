// The summaries of a Run that `parlot-read` prints, as data: per-function
// statistics (report --by function), each thread's loop summary (loops),
// the merged open stacks (stacks) and the thread classes (classes). Each
// computes the same numbers as its command on the same trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "run.h"

namespace parlot::python {

/// One function's row of `parlot-read report --by function`.
struct FunctionStats {
  std::string function;  ///< name as the report prints it
  std::uint64_t calls = 0;
  std::uint64_t total = 0;      ///< inclusive cost of its outermost activations (unit: StatsTable)
  std::uint64_t self = 0;       ///< exclusive cost
  std::uint32_t max_depth = 0;  ///< deepest call (1 = outermost)
};

/// Every function's statistics, merged by name over every thread.
struct StatsTable {
  std::vector<FunctionStats> rows;  ///< by function name
  /// "ns" (real time, since the earliest clock sample) or "events" (the
  /// logical clock: some thread has no clock samples).
  std::string unit;
  std::string description;  ///< the report's "# time axis:" line
  /// Threads that could not be read to their end ("file: offset N: what").
  std::vector<std::string> damage;
};

/// The statistics of `parlot-read report --by function` of `run`. Damaged
/// threads count up to their damage (StatsTable::damage names them).
StatsTable function_stats(Run& run);

/// Writes `run` in export format `format` (`parlot-read export --format`:
/// "chrome", "perfetto", "speedscope", "folded", "callgrind", "dot",
/// "hatchet", "otf2" as built) to `output`, as the command does without
/// options (dot: the 50 most called edges; folded: at most 1 GiB; chrome:
/// no limit on the events). Returns the damaged threads' messages (each exported up to its
/// damage). Throws std::invalid_argument for an unknown format and
/// std::runtime_error when the output cannot be written.
std::vector<std::string> export_run(Run& run, const std::string& format, const std::string& output);

/// A user mark (parlot_mark) of a thread, placed as `parlot-read trace`
/// places it.
struct ThreadMark {
  std::size_t thread = 0;   ///< index into Run::threads()
  std::uint64_t index = 0;  ///< it sits just before this event of the thread's stream
  std::uint32_t depth = 0;  ///< calls open there
  std::string label;        ///< the program's bytes
};

/// Every thread's marks, in thread order, each thread's in stream order. A
/// thread with marks is decoded to place them (its depth); one without is
/// not read past its block headers. A damaged thread's marks up to the
/// damage are kept, the message goes to `damage`.
std::vector<ThreadMark> thread_marks(Run& run, std::vector<std::string>& damage);

/// One thread's loop summary (`parlot-read loops`).
struct ThreadLoops {
  std::size_t thread = 0;    ///< index into Run::threads()
  std::uint64_t events = 0;  ///< events summarised
  std::string loops;         ///< e.g. "main { 1000 x [ step ] }"
};

/// Every readable thread's loop summary, bodies up to `max_body` items.
/// A damaged thread is left out and named in `damage`.
std::vector<ThreadLoops> thread_loops(Run& run, std::size_t max_body,
                                      std::vector<std::string>& damage);

/// One thread's open call stack at the end of its trace (names, outermost
/// first), and the text `parlot-read stacks` prints for all of them.
struct StacksResult {
  std::vector<std::size_t> threads;              ///< indices into Run::threads()
  std::vector<std::vector<std::string>> stacks;  ///< per entry of `threads`
  std::string text;                              ///< `parlot-read stacks`
  std::string dot;                               ///< `parlot-read stacks --format dot`
  std::vector<std::string> damage;
};
StacksResult open_stacks(Run& run);

/// One equivalence class of threads (`parlot-read classes`).
struct ThreadClass {
  char label = 'A';                  ///< A = the largest class
  std::string members;               ///< thread ranges as printed, e.g. "rank 0-3: thread 0"
  std::size_t size = 0;              ///< threads in the class
  std::string representative;        ///< label of its first thread
  std::uint64_t hash = 0;            ///< the class's fingerprint
  std::vector<std::size_t> threads;  ///< its threads, indices into Run::threads()
};

/// The classes of `run` by `by` ("trace", "loops", "edges" or "stack";
/// loop bodies up to `max_body`), outliers first as the command orders them.
/// Throws std::invalid_argument for another `by`.
std::vector<ThreadClass> thread_classes(Run& run, const std::string& by, std::size_t max_body,
                                        std::vector<std::string>& damage);

}  // namespace parlot::python
