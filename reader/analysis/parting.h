// Where two threads' loop summaries part, in the loops' coordinate: the
// common events before it, the calls and loop iterations open there
// ("iteration 6 of the loop in main"), and what each thread does next
// (calls f, returns from f, stops inside f, ends). Calls to the functions of
// a role (`RoleCode`: code only some threads run, e.g. root-only output) are
// left out of both sides, so a root rank compares equal to the others when
// it differs only by its role's code. The walk goes over the summaries, not
// the events: equal calls and equal loops are skipped whole.
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "event.h"
#include "loops.h"

namespace parlot::analysis {

/// Functions left out of a comparison: every call to them, with what they call.
using RoleCode = std::unordered_set<FunctionKey>;

/// A frame open where two threads part: a call, or an iteration of a loop
/// (inside the call before it in the path, or at the thread's top level).
struct PathFrame {
  bool loop = false;
  FunctionKey function = 0;     ///< the call's function (calls only)
  std::uint64_t iteration = 0;  ///< 1-based iteration (loops only)
  /// Iterations of the loop (loops only); 0 when the thread was inside an
  /// iteration beyond the ones the loop folded (a loop left in its middle).
  std::uint64_t count = 0;
};

/// What a thread does at the point where it parts from the other.
struct PartingStep {
  enum class Kind {
    kCall,    ///< enters `function`
    kReturn,  ///< returns from `function` (the innermost open call)
    kStop,    ///< its stream ends inside `function`, still open (blocked or killed there)
    kEnd,     ///< its stream ends, no call open
  };
  Kind kind = Kind::kEnd;
  FunctionKey function = 0;
  /// True for kStop and kEnd: the thread did nothing more (a victim of a
  /// hang waits; a thread that went on did something else).
  bool stops() const { return kind == Kind::kStop || kind == Kind::kEnd; }
};

struct Parting {
  /// No parting: both streams are the same (role code left out), but for
  /// differences inside calls both threads complete (`within_completed`).
  bool identical = true;
  bool unresolved = false;  ///< the walk gave up after its step budget (then `identical`)
  /// Common events before the parting (role code left out; past a call both
  /// complete that differs, the events of `mine`'s call are counted).
  std::uint64_t events = 0;
  std::vector<PathFrame> path;  ///< calls and loop iterations open there, outermost first
  PartingStep mine, theirs;     ///< what each thread does there
  /// Index, in each thread's event stream (the one its summary stands for,
  /// role code included), of the event where it parts: the entry of the
  /// call it makes, its return; for a stream that stops or ends, the
  /// stream's length. Lets a caller read the thread again up to there
  /// (call sites of the path).
  std::uint64_t mine_index = 0, theirs_index = 0;
  /// The call both threads complete inside which they part (0: none, the
  /// parting is for good: at the top level, or inside a call at least one
  /// of them never returns from).
  FunctionKey within = 0;
  /// The first difference inside a call both complete (`within` set), seen
  /// on the way to this parting: the walk leaves such a call on both sides
  /// and goes on after it (what a call does can depend on the thread's data
  /// or position: a difference of role, or a wrong branch). At most one.
  std::vector<Parting> within_completed;
  /// The 1-based iterations of the loop frames of `path`, outermost first:
  /// the coordinate partings are ordered by.
  std::vector<std::uint64_t> iterations() const;
};

/// Per call and loop body of one summary, the hash of its content and the
/// events it stands for with the role code left out.
class FilteredSummary {
 public:
  /// `summary` and `role` must outlive this.
  FilteredSummary(const LoopSummary& summary, const RoleCode& role);
  const LoopSummary& summary() const { return s_; }
  /// True for a call to a role function, and for a loop whose body is all role code.
  bool skipped(const LoopSummary::Item& i);
  /// Content hash (loop counts included) of a call, or of a loop's body.
  std::uint64_t hash(const LoopSummary::Item& i);
  /// Events of a call (all its iterations for a loop), role code left out.
  std::uint64_t events(const LoopSummary::Item& i);
  /// Events of one iteration of a loop (i.loop).
  std::uint64_t body_events(const LoopSummary::Item& i);
  /// events() with the role code counted: the events the item stands for
  /// in the thread's stream.
  std::uint64_t all_events(const LoopSummary::Item& i);
  /// body_events() with the role code counted.
  std::uint64_t all_body_events(const LoopSummary::Item& i);

 private:
  struct Info {
    std::uint64_t hash = 0, events = 0;
    std::uint64_t all = 0;  ///< events with the role code
  };
  const Info& info(const LoopSummary::Item& i);
  const LoopSummary& s_;
  const RoleCode& role_;
  std::vector<Info> call_, body_;
  std::vector<bool> call_done_, body_done_;
};

/// Walks `mine` and `theirs` side by side from their start (O(items
/// visited); at most `max_steps` steps, then `unresolved`) and returns
/// where they part for good, as seen from `mine`: a difference inside a
/// call both complete is kept in `within_completed` (the first one) and the
/// walk goes on after that call.
Parting part(FilteredSummary& mine, FilteredSummary& theirs, std::uint64_t max_steps = 10'000'000);

}  // namespace parlot::analysis
