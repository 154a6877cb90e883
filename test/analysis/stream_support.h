// Helpers of the analysis unit tests: call trees written as strings turned
// into event streams, a vector as an EventSource, a stream's loop summary.
#pragma once

#include <random>
#include <span>
#include <string>
#include <vector>

#include "analysis/event.h"
#include "analysis/loops.h"

namespace parlot::analysis {

/// Events of a call tree written as a string: a lowercase letter is a call
/// of that function, '(' opens its body, ')' closes it; "a(bb)c" = a calls b
/// twice, then c is called.
inline std::vector<Event> stream(const std::string& tree, NameTable* names = nullptr) {
  std::vector<Event> out;
  std::vector<FunctionKey> open;
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const char c = tree[i];
    if (c == ')') {
      out.push_back({false, open.back(), static_cast<std::uint32_t>(open.size() - 1)});
      open.pop_back();
      continue;
    }
    const std::string name(1, c);
    const FunctionKey k = function_key(name);
    if (names) names->add(k, name);
    out.push_back({true, k, static_cast<std::uint32_t>(open.size())});
    if (i + 1 < tree.size() && tree[i + 1] == '(') {
      open.push_back(k);
      ++i;
    } else {
      out.push_back({false, k, static_cast<std::uint32_t>(open.size())});
    }
  }
  return out;
}

class VectorSource : public EventSource {
 public:
  explicit VectorSource(std::vector<Event> e, std::vector<Mark> marks = {})
      : events_(std::move(e)), marks_(std::move(marks)) {}
  bool next(Event& e) override {
    if (pos_ == events_.size()) return false;
    e = events_[pos_++];
    return true;
  }
  std::span<const Mark> marks() const override { return marks_; }
  std::uint64_t last_index() const override { return pos_ - 1; }

 private:
  std::vector<Event> events_;
  std::vector<Mark> marks_;
  std::size_t pos_ = 0;
};

/// A random call tree in stream() notation of 1 to `max_length` calls and
/// brackets over functions a, b and c, possibly left open at the end.
inline std::string random_tree(std::mt19937& rng, int max_length) {
  std::string tree;
  int depth = 0;
  const int length = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_length));
  for (int i = 0; i < length; ++i) {
    const unsigned r = rng() % 10;
    if (r < 3 && depth > 0) {
      tree += ')';
      --depth;
    } else {
      tree += static_cast<char>('a' + rng() % 3);
      if (r > 6) {
        tree += '(';
        ++depth;
      }
    }
  }
  while (rng() % 2 && depth-- > 0) tree += ')';
  return tree;
}

inline LoopSummary summarise(const std::vector<Event>& events, std::size_t max_body = 8) {
  LoopBuilder b(max_body);
  for (const Event& e : events) b.push(e);
  return b.finish();
}

}  // namespace parlot::analysis
