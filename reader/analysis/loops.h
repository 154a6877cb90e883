// Nested loop recognition (NLR, Ketterlin & Clauss CGO 2008, as DiffTrace
// applies it to ParLoT traces): a thread's call tree with each run of
// repeated call sequences folded into "N x [ body ]", e.g.
//   main { 1000 x [ step { 3 x [ exchange ] compute } ] finalize }
// Lossless: expand() gives back exactly the event stream. Streaming: O(K^2)
// per event for bodies of up to K items; identical subtrees and loop bodies
// are stored once (hash-consed), so a repetitive 10^9-event thread takes
// memory for its distinct shapes, not its events.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "event.h"

namespace parlot::analysis {

class LoopSummary {
 public:
  /// A call (id into calls()) or a loop (id into bodies(), `count` >= 2).
  struct Item {
    bool loop = false;
    std::uint32_t id = 0;
    std::uint64_t count = 1;
    bool operator==(const Item&) const = default;
  };
  struct Call {
    FunctionKey function = 0;
    bool open = false;       ///< no exit: the call was open at the end of the trace
    std::vector<Item> body;  ///< what it called, folded
  };

  const std::vector<Item>& top() const { return top_; }
  const std::vector<Call>& calls() const { return calls_; }
  const std::vector<std::vector<Item>>& bodies() const { return bodies_; }

  /// The event stream this summary stands for (depths recomputed).
  std::vector<Event> expand() const;
  /// Events the summary stands for, without expanding.
  std::uint64_t event_count() const;
  /// "main { 1000 x [ step { 3 x [ exchange ] compute } ] }"; an open call
  /// ends with "..." instead of "}".
  std::string to_string(const NameTable& names) const;
  /// to_string() cut between items once it is longer than `max_chars`
  /// characters: then it ends in " ..." and `*cut` (when given) is set true.
  std::string to_string(const NameTable& names, std::size_t max_chars, bool* cut) const;
  /// The text of one item of this summary, as to_string() writes it, cut
  /// after about `max_chars` characters (then ending in "...").
  std::string item_to_string(const Item& item, const NameTable& names,
                             std::size_t max_chars = SIZE_MAX) const;
  /// Hash of the structure with every loop count left out: equal for two
  /// threads whose loops differ only in iteration counts.
  std::uint64_t structure_hash() const;

  /// The items of call or loop `i`: the call's body, or the loop's body.
  const std::vector<Item>& items_of(const Item& i) const {
    return i.loop ? bodies_[i.id] : calls_[i.id].body;
  }
  /// Calls `finish(item)` for `root` and for every call and loop below it
  /// for which `done(item)` is false, each after all the calls and loops
  /// in its items (post-order). `finish` must make `done` true for its
  /// item (a shared subtree is then finished once). An explicit stack, no
  /// native recursion: nesting can be as deep as the trace's call stack
  /// (10^5-10^6 frames, e.g. after a stack overflow).
  template <class Done, class Finish>
  void post_order(const Item& root, Done&& done, Finish&& finish) const {
    if (done(root)) return;
    struct Level {
      Item owner;
      const std::vector<Item>* items;
      std::size_t next;
    };
    std::vector<Level> todo{{root, &items_of(root), 0}};
    while (!todo.empty()) {
      Level& level = todo.back();
      if (level.next < level.items->size()) {
        const Item& i = (*level.items)[level.next++];
        if (!done(i)) todo.push_back({i, &items_of(i), 0});
        continue;
      }
      const Item owner = level.owner;
      todo.pop_back();
      finish(owner);
    }
  }

 private:
  friend class LoopBuilder;
  std::vector<Item> top_;
  std::vector<Call> calls_;
  std::vector<std::vector<Item>> bodies_;
};

/// Builds a LoopSummary from one thread's events.
class LoopBuilder {
 public:
  /// `max_body`: longest loop body recognised, in items (K).
  explicit LoopBuilder(std::size_t max_body = 8);
  void push(const Event& e);
  /// Closes the calls still open (marked open) and returns the summary.
  LoopSummary finish();

 private:
  struct Frame {
    FunctionKey function;
    std::vector<LoopSummary::Item> items;
  };
  void append(std::vector<LoopSummary::Item>& items, LoopSummary::Item item);
  std::uint32_t intern_call(FunctionKey function, bool open, std::vector<LoopSummary::Item> body);
  std::uint32_t intern_body(std::vector<LoopSummary::Item> body);

  std::size_t max_body_;
  std::vector<Frame> frames_;  // [0]: the thread's top level
  LoopSummary summary_;
  std::unordered_map<std::string, std::uint32_t> call_ids_, body_ids_;
  std::unordered_map<FunctionKey, std::uint32_t> leaf_ids_;  // closed calls without callees
};

}  // namespace parlot::analysis
