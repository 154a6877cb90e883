// Equivalence classes of threads (issue 9 §2): threads whose call streams
// are identical (--by trace: a streaming hash of the decoded, filtered
// stream), whose loop structure is identical up to iteration counts
// (--by loops), whose caller -> callee edge sets are equal (--by edges), or
// whose final open call stacks are equal (--by stack).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "event.h"
#include "loops.h"
#include "parlot/call_stack_tracker.h"
#include "stack_tree.h"
#include "thread_set.h"

namespace parlot::analysis {

enum class ClassBy { kTrace, kLoops, kEdges, kStack };

/// Parses "trace", "loops", "edges", "stack"; throws std::invalid_argument.
ClassBy parse_class_by(const std::string& by);

/// Streams one thread's events into the hash `by` asks for. O(1) per event
/// for trace and stack, one hash-set insert per call for edges, the loop
/// builder's cost for loops.
class FingerprintBuilder {
 public:
  explicit FingerprintBuilder(ClassBy by, std::size_t max_body = 8) : by_(by), loops_(max_body) {}
  void push(const Event& e) {
    ++events_;
    switch (by_) {
      case ClassBy::kTrace:
        trace_ = trace_step(trace_, e.enter ? e.function : kExitWord);
        break;
      case ClassBy::kEdges:
        if (e.enter) {
          edges_.insert(
              edge_hash(stack_.frames().empty() ? 0 : stack_.frames().back(), e.function));
        }
        stack_.push(e);
        break;
      case ClassBy::kStack:
        stack_.push(e);
        break;
      case ClassBy::kLoops:
        loops_.push(e);
        break;
    }
  }
  /// push() of each of `events` in order (the key's switch taken once).
  void push(std::span<const Event> events);
  /// push() of each of `calls` in order, as the Events {entered?,
  /// key_of(function ID), depth} they stand for, without making them: the
  /// batch loop of `classes --by trace` (`key_of` maps a function ID of the
  /// calls' process to its FunctionKey).
  template <class KeyOf>
  void push(std::span<const CallEvent> calls, KeyOf&& key_of) {
    if (by_ != ClassBy::kTrace) {
      for (const CallEvent& c : calls) {
        push(Event{c.kind == CallEvent::Kind::kEnter, key_of(c.function_id), c.depth});
      }
      return;
    }
    std::uint64_t h = trace_;
    for (const CallEvent& c : calls) {
      const FunctionKey f = key_of(c.function_id);
      h = trace_step(h, c.kind == CallEvent::Kind::kEnter ? f : kExitWord);
    }
    trace_ = h;
    events_ += calls.size();
  }
  /// The thread's class hash (events included for --by trace).
  std::uint64_t finish();
  std::uint64_t events() const { return events_; }

  /// Hash of one caller -> callee edge (0 = the thread's outermost frame).
  static std::uint64_t edge_hash(FunctionKey caller, FunctionKey callee);

 private:
  static constexpr std::uint64_t kExitWord = 0x2545f4914f6cdd1dull;  // an exit in the trace hash
  /// The trace hash `h` after one more event (its function key, or
  /// kExitWord for an exit).
  static std::uint64_t trace_step(std::uint64_t h, std::uint64_t word) {
    h = (h ^ word) * 0x100000001b3ull;
    return h ^ (h >> 29);
  }
  ClassBy by_;
  std::uint64_t events_ = 0;
  std::uint64_t trace_ = 0xcbf29ce484222325ull;
  std::unordered_set<std::uint64_t> edges_;
  OpenStack stack_;
  LoopBuilder loops_;
};

/// Threads grouped by class hash; merge() unions two groupings.
class Classes {
 public:
  struct Class {
    std::uint64_t hash = 0;
    ThreadSet members;
    char label = 'A';  ///< 'A' = largest class, then 'B', ... ('?' beyond 'Z')
  };
  void add(ThreadId thread, std::uint64_t hash) { by_hash_[hash].insert(thread); }
  void merge(const Classes& other);
  /// Classes, outliers first: by size ascending, then by first member.
  /// Labels: A for the largest (ties: lowest first member), B, C, ...
  std::vector<Class> ordered() const;

 private:
  std::map<std::uint64_t, ThreadSet> by_hash_;
};

/// Jaccard similarity |A n B| / |A u B| of two hash sets (1 when both empty).
double jaccard(const std::unordered_set<std::uint64_t>& a,
               const std::unordered_set<std::uint64_t>& b);

}  // namespace parlot::analysis
