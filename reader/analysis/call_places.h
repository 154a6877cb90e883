// Where a call was made, from a thread's loop summary (NLR, loops.h): the
// call path down to the call and the iteration of the innermost loop that
// encloses it, e.g. "main > step > MPI_Reduce, iteration 6 of the loop in
// main". Used by `check` to name where an MPI call went wrong.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "loops.h"

namespace parlot::analysis {

/// One loop around a call: the call is in its `iteration`-th repetition
/// (1-based) of `iterations` (as recorded, up to the end of the trace);
/// `owner` is the function whose body holds the loop (0: the top level).
struct LoopIteration {
  std::uint64_t iteration = 0;
  std::uint64_t iterations = 0;
  FunctionKey owner = 0;
};

/// A call's place in its thread's loop structure.
struct CallPlace {
  /// Function keys of the calls open at the call, outermost first, the call
  /// itself last. Empty when the event was not found (not an entry).
  std::vector<FunctionKey> path;
  /// 1-based iteration of the innermost NLR loop enclosing the call (the
  /// repetitions of the loop's pattern just before the loop count too), or
  /// 0 when no loop encloses it. A frame that broke its loop's pattern
  /// ("3 x [ step ] step'") counts as the repetition it would have been:
  /// the odd step is iteration 4.
  std::uint64_t iteration = 0;
  /// That loop's repetitions (as recorded: up to the end of the trace).
  std::uint64_t iterations = 0;
  /// The function whose body holds that loop, 0 for the thread's top level.
  FunctionKey loop_owner = 0;
  /// Every loop around the call, innermost first (iteration, iterations
  /// and loop_owner above are the first's).
  std::vector<LoopIteration> loops;
  /// The call did not return before the end of the trace.
  bool open = false;
};

/// The places of the entry events at indices `entries` (sorted, ascending;
/// indices into the unfiltered event stream `summary` stands for) of one
/// thread, in the same order. An index that is not an entry event gets an
/// empty path. Skips the subtrees and loop iterations that hold no wanted
/// index: O(depth x body) per wanted event, not O(events).
std::vector<CallPlace> call_places(const LoopSummary& summary,
                                   std::span<const std::uint64_t> entries);

/// The calls open at the end of the thread's stream, outermost first (the
/// trailing open calls of the summary).
std::vector<FunctionKey> open_calls_at_end(const LoopSummary& summary);

/// "iteration 6 of the loop in main" ("... of the loop at the top level"
/// when no call holds it), one such part per loop around the call,
/// outermost first ("iteration 6 of the loop in main, iteration 2 of the
/// loop in exchange"), or "" when no loop encloses the call.
std::string iteration_text(const CallPlace& place, const NameTable& names);

/// "main > step > MPI_Reduce": the path's names joined by " > ".
std::string path_text(const CallPlace& place, const NameTable& names);

}  // namespace parlot::analysis
