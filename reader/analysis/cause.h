// Cause first: which thread parts from the behaviour of its role's majority
// earliest, and where (docs/DESIGN.md "Cause first"). The rule:
//  - A role is the main threads (thread index 0) of all processes, or their
//    other threads; threads are compared within their role only.
//  - Role code: a function that at most half of a role's threads call at
//    all (root-only output, say) is left out of the comparison, with what it
//    calls, and listed.
//  - Each thread is compared with every other thread of its role (up to
//    `max_peers`, evenly spaced) on their loop summaries (parting.h). It
//    parts from the majority at the earliest of its partings by which more
//    than half of the peers still running have parted from it; a peer that
//    stopped (its stream ends: it waits, or was killed) where the thread
//    went on is no longer running from there. (When every peer stopped
//    before it: the floor(k/2)-th earliest of its k partings.) A thread
//    that never parts so is not an outlier. Shown for the first outlier is
//    that parting, or, when there it merely went on where the peer stopped
//    (the peer's wait, not its own doing), its earliest other parting.
//  - Outliers are ordered by where they part: by the iterations of the
//    loops open there (outermost first, the loops' own coordinate), then
//    threads that went on differently before threads that stopped there (a
//    hang's victims stop: they wait for the culprit), then by common events.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "event.h"
#include "loops.h"
#include "parting.h"

namespace parlot::analysis {

/// One thread's loop summary, as find_causes() takes it.
struct ThreadLoops {
  ThreadId id;
  const LoopSummary* summary = nullptr;  ///< not owned
};

/// A thread that parts from its role's majority.
struct Outlier {
  ThreadId thread;
  ThreadId reference;  ///< the thread `parting` is with
  /// The parting shown, as seen from `thread`: `majority`, unless there it
  /// merely goes on where the peer stopped (a hang's victim waiting); then
  /// its earliest parting in which it does something else.
  Parting parting;
  std::size_t peers = 0;        ///< peers still running where it parts (`majority`)
  std::size_t parted = 0;       ///< of them, those parted from it there
  Parting majority;             ///< where a majority of the peers has parted from it (the order)
  ThreadId majority_reference;  ///< the thread `majority` is with
  /// Call sites ("file:line"), filled in by the caller (find_causes()
  /// leaves them empty; empty: none shown): one per frame of
  /// `parting.path` (loop frames' empty), and those of the calls
  /// `parting.mine` and `parting.theirs` make.
  std::vector<std::string> path_sites;
  std::string mine_site, theirs_site;
};

/// A function left out as role code, and how many of its role's threads call it.
struct RoleFunction {
  FunctionKey function = 0;
  bool main_threads = true;  ///< the role: main threads, or other threads
  std::size_t callers = 0, threads = 0;
};

struct CauseReport {
  std::size_t threads = 0;
  std::vector<Outlier> outliers;  ///< earliest parting first
  std::vector<RoleFunction> role_code;
  /// Comparisons that gave up after their step budget (counted as equal).
  std::size_t unresolved = 0;
};

/// The report for `threads` (any order). Time: O(threads x max_peers)
/// summary walks, each O(the items it visits).
CauseReport find_causes(const std::vector<ThreadLoops>& threads, std::size_t max_peers = 64);

/// Formats one frame of a parting's path: a call as its function's name
/// ("f at a.c:12" with a call site `site`, "file:line"), a loop iteration
/// as "[iteration N]".
std::string frame_text(const PathFrame& frame, const NameTable& names,
                       const std::string& site = {});

/// "iteration 6 of the loop in main" for the innermost loop of `path`
/// (", in iteration 2 of the loop in f" for each loop around it); "" when
/// no loop is open there.
std::string iteration_text(const std::vector<PathFrame>& path, const NameTable& names);

/// "calls f" ("calls f at a.c:12" with a call site `site`, "file:line"),
/// "returns from f", "stops inside f", "ends".
std::string step_text(const PartingStep& step, const NameTable& names,
                      const std::string& site = {});

/// At most `max_lines` lines (>= 4) for the top of `classes`: the earliest
/// outlier with its shown parting (where, what it does, the call path), the
/// next outliers one line each with their majority parting, the role code left out; or that every
/// thread behaves as its role's majority. `label` names a thread ("rank 2").
std::string describe_causes(const CauseReport& report, const NameTable& names,
                            const std::function<std::string(ThreadId)>& label,
                            std::size_t max_lines = 10);

}  // namespace parlot::analysis
