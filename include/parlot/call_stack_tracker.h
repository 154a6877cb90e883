// Rebuilds the call stack from a thread's event stream, as the runtime's
// shadow stack did (ParLoT paper §3.4): an event other than 0 is an entry
// into that function ID, 0 is the exit of the innermost open call. The
// runtime emits well-nested streams; the tracker verifies it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "parlot/trace_reader.h"

namespace parlot {

/// One event of a thread with its place in the call tree.
struct CallEvent {
  enum class Kind : std::uint8_t { kEnter, kExit };
  Kind kind;
  std::uint32_t function_id;  ///< the function entered or left (never 0)
  std::uint32_t depth;        ///< 0 = the thread's outermost frame
  std::uint32_t caller_id;    ///< function ID of the caller, 0 at depth 0
};

class CallStackTracker {
 public:
  /// Deepest nesting accepted (frames): the runtime's largest
  /// PARLOT_MAX_DEPTH. Deeper streams are damaged, not programs.
  static constexpr std::size_t kMaxDepth = std::size_t{1} << 26;

  /// `function_count`: IDs 1..function_count are valid; 0 = not known (no
  /// function table), any ID accepted. `file` names errors.
  CallStackTracker(std::uint64_t function_count, std::filesystem::path file)
      : function_count_(function_count), file_(std::move(file)) {}

  /// Turns the next raw event into a CallEvent. Throws FormatError when the
  /// stream is not well nested (an exit with no open call), nests deeper
  /// than kMaxDepth, or names an unknown function ID; the offset reported is
  /// the event's index.
  /// Inline and small (the errors are out of line): every view's per-event
  /// loop.
  CallEvent push(std::uint32_t id) {
    ++index_;
    if (id == 0) {
      if (stack_.empty()) [[unlikely]] {
        unbalanced_exit();
      }
      const std::uint32_t f = stack_.back();
      stack_.pop_back();
      return {CallEvent::Kind::kExit, f, static_cast<std::uint32_t>(stack_.size()), caller()};
    }
    if ((function_count_ != 0 && id > function_count_) || stack_.size() == kMaxDepth) [[unlikely]] {
      bad_entry(id);
    }
    const std::uint32_t c = caller();
    stack_.push_back(id);
    return {CallEvent::Kind::kEnter, id, static_cast<std::uint32_t>(stack_.size() - 1), c};
  }

  /// push() of each of the `n` events at `ids`, into `out[0..n)`; the same
  /// results and errors, with the stack in registers (the batch loop of
  /// `stats` and `classes`). `out` may not alias `ids`.
  void push_all(const std::uint32_t* ids, std::size_t n, CallEvent* out) {
    track(
        ids, n,
        [out](std::size_t i, std::uint32_t caller, std::uint32_t id, std::size_t depth) {
          out[i] = {CallEvent::Kind::kEnter, id, static_cast<std::uint32_t>(depth), caller};
        },
        [out](std::size_t i, std::uint32_t caller, std::uint32_t id, std::size_t depth) {
          out[i] = {CallEvent::Kind::kExit, id, static_cast<std::uint32_t>(depth), caller};
        });
  }

  /// The entries among the `n` events at `ids`, as push_all() tracks them
  /// (the same checks and errors), without materialising CallEvents: calls
  /// `on_entry(caller_id, function_id)` for each entry (caller 0 at depth
  /// 0). For views that only count entries (`stats`: issue 12 §3, one pass
  /// instead of 16 bytes written and read again per event).
  template <class OnEntry>
  void for_each_entry(const std::uint32_t* ids, std::size_t n, OnEntry&& on_entry) {
    track(
        ids, n,
        [&on_entry](std::size_t, std::uint32_t caller, std::uint32_t id, std::size_t) {
          on_entry(caller, id);
        },
        [](std::size_t, std::uint32_t, std::uint32_t, std::size_t) {});
  }

  /// Calls still open (innermost last).
  const std::vector<std::uint32_t>& open_calls() const { return stack_; }

 private:
  std::uint32_t caller() const { return stack_.empty() ? 0 : stack_.back(); }

  // The batch loop of push_all() and for_each_entry(): for event i, an
  // entry calls on_entry(i, caller, function, depth of its frame) and an
  // exit on_exit(i, caller, function left, depth of its frame); caller 0 at
  // depth 0. The stack stays in registers; errors as push().
  template <class OnEntry, class OnExit>
  void track(const std::uint32_t* ids, std::size_t n, OnEntry&& on_entry, OnExit&& on_exit) {
    std::size_t depth = stack_.size();
    stack_.resize(depth + n);  // room for n entries: no growth in the loop
    std::uint32_t* const st = stack_.data();
    const std::uint64_t first = index_;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t id = ids[i];
      if (id == 0) {
        if (depth == 0) [[unlikely]] {
          stack_.resize(0);
          index_ = first + i + 1;
          unbalanced_exit();
        }
        --depth;
        on_exit(i, depth == 0 ? 0 : st[depth - 1], st[depth], depth);
      } else {
        if ((function_count_ != 0 && id > function_count_) || depth == kMaxDepth) [[unlikely]] {
          stack_.resize(depth);
          index_ = first + i + 1;
          bad_entry(id);
        }
        on_entry(i, depth == 0 ? 0 : st[depth - 1], id, depth);
        st[depth++] = id;
      }
    }
    stack_.resize(depth);
    index_ = first + n;
  }

  [[noreturn, gnu::cold, gnu::noinline]] void unbalanced_exit() const {
    throw FormatError(file_, index_ - 1,
                      "exit with no open call at event " + std::to_string(index_ - 1) +
                          " (offset given in events)");
  }
  [[noreturn, gnu::cold, gnu::noinline]] void bad_entry(std::uint32_t id) const {
    if (function_count_ != 0 && id > function_count_) {
      throw FormatError(file_, index_ - 1,
                        "unknown function ID " + std::to_string(id) + " at event " +
                            std::to_string(index_ - 1) + " (table has " +
                            std::to_string(function_count_) + ", offset given in events)");
    }
    throw FormatError(file_, index_ - 1,
                      "calls nested deeper than " + std::to_string(kMaxDepth) + " at event " +
                          std::to_string(index_ - 1) + " (offset given in events)");
  }

  std::uint64_t function_count_;
  std::filesystem::path file_;
  std::vector<std::uint32_t> stack_;
  std::uint64_t index_ = 0;
};

}  // namespace parlot
