// Where two call streams part (issue 9 §4, DiffTrace): the first event that
// differs, with context and the call stack there, and per-function call
// counts of both sides.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "event.h"

namespace parlot::analysis {

/// An event of the context around a divergence, with the labels of the
/// user marks just before it (EventSource::marks(); marks never decide a
/// divergence, they are shown).
struct ContextEvent : Event {
  std::vector<std::string> marks_before;
  std::uint64_t site = 0;  ///< an entry's call site (EventSource::last_site()), 0 unknown
};

struct Divergence {
  bool identical = true;       ///< both streams are the same
  std::uint64_t position = 0;  ///< 0-based index of the first differing event
  std::vector<ContextEvent>
      before;                      ///< up to `context` common events just before it (left's marks)
  std::vector<FunctionKey> stack;  ///< open calls there (outermost first), common to both
  /// Call sites of `stack`'s frames in the left stream (EventSource::last_site(); 0 unknown).
  std::vector<std::uint64_t> stack_sites;
  std::vector<ContextEvent> left, right;  ///< up to `context` events from `position` on each side
  /// Marks after the last event of each side, when its context reaches its end.
  std::vector<std::string> left_end_marks, right_end_marks;
  std::uint64_t left_events = 0, right_events = 0;  ///< events of each stream
  /// Calls (entries) per function on each side.
  std::map<FunctionKey, std::uint64_t> left_calls, right_calls;
};

/// Reads both streams to their end (O(events) time, O(context + depth +
/// functions) memory) and returns where they first differ.
Divergence first_divergence(EventSource& left, EventSource& right, std::size_t context);

/// "file:line" of a call site of the left (`left` true) or right stream,
/// or "" when unknown (it is then not shown).
using SiteText = std::function<std::string(bool left, std::uint64_t site)>;

/// Text of `d`: "identical (N events)" or the position, stack ("f > g at
/// a.c:12 > ...", the frames' call sites through `site_text` when given),
/// context ("enter g at a.c:12") and the calls-per-function deltas; names
/// through `names`. Consecutive frames of one function called from one
/// site in the stack are written "f x N"; context lines are indented as
/// analysis/indent.h says (linear in the depth).
std::string describe_divergence(const Divergence& d, const NameTable& names,
                                const std::string& left_label, const std::string& right_label,
                                const SiteText& site_text = {});

}  // namespace parlot::analysis
