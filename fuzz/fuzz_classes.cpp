// libFuzzer target: `parlot-read classes` (issue 9 §2) on arbitrary call
// streams of K threads, through the library calls the command makes
// (reader/tool/classes_command.cpp): FingerprintBuilder per thread (a batch
// at a time), Classes, ordered(), first_divergence() of every class's
// representative against class A's, describe_divergence().
//
// Input: byte 0 = the key (bits 0-1: trace, loops, edges, stack), malformed
// streams (bit 2), divergence context 0-3 (bits 3-4), batch size (bits 5-7:
// 1, 2, 3, 7, 64, 255, 4096, whole stream); byte 1 = --max-body (1-16);
// the rest = the threads (fuzz_streams.h).
//
// Checks:
// - a batch at a time gives the same class hash as an event at a time;
// - the classes partition the threads (each in exactly one class); labels
//   A.. by size, A the largest; outliers (small classes) first;
// - --by trace: two threads share a class iff their streams are equal
//   (compared, so a hash collision is caught; malformed streams: equal
//   streams share a class); --by stack: iff their final open stacks are
//   equal; --by edges: iff their caller -> callee edge sets are equal;
//   --by loops: equal streams share a class;
// - the first divergence of a class against class A is real: both streams
//   agree before its position and differ at it (or one ends there); the
//   event counts, calls per function, common context, stack there and
//   each side's context are those of the streams;
// - jaccard() is 1 on a set and itself, symmetric, within [0, 1];
// - the text (classes, ranges, divergences) is the same on a second run.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "classes.h"
#include "divergence.h"
#include "fuzz_streams.h"
#include "fuzz_support.h"

namespace {

using namespace parlot::analysis;
using parlot::fuzz::FuzzThreads;

struct Options {
  ClassBy by = ClassBy::kTrace;
  bool malformed = false;
  std::size_t context = 0;
  std::size_t batch = 1;
  std::size_t max_body = 8;
};

std::uint64_t class_hash(const std::vector<Event>& events, const Options& o) {
  FingerprintBuilder batched(o.by, o.max_body), single(o.by, o.max_body);
  const std::span<const Event> all(events);
  for (std::size_t i = 0; i < all.size(); i += o.batch) {
    batched.push(all.subspan(i, std::min(o.batch, all.size() - i)));
  }
  for (const Event& e : events) single.push(e);
  PARLOT_FUZZ_CHECK(batched.events() == events.size());
  PARLOT_FUZZ_CHECK(single.events() == events.size());
  const std::uint64_t h = batched.finish();
  PARLOT_FUZZ_CHECK(h == single.finish());
  return h;
}

/// Caller -> callee edges (0: the thread's outermost frame), as a set of
/// pairs: the edges key's meaning, computed without its hashes.
std::set<std::pair<FunctionKey, FunctionKey>> edge_set(const std::vector<Event>& events) {
  std::set<std::pair<FunctionKey, FunctionKey>> edges;
  std::vector<FunctionKey> stack;
  for (const Event& e : events) {
    if (e.enter) {
      edges.emplace(stack.empty() ? 0 : stack.back(), e.function);
      stack.push_back(e.function);
    } else if (!stack.empty()) {
      stack.pop_back();
    }
  }
  return edges;
}

std::unordered_set<std::uint64_t> edge_hashes(const std::vector<Event>& events) {
  std::unordered_set<std::uint64_t> out;
  for (const auto& [caller, callee] : edge_set(events)) {
    out.insert(FingerprintBuilder::edge_hash(caller, callee));
  }
  return out;
}

/// What each thread's class must depend on, per key: its stream (trace,
/// loops), its final open stack (stack) or its edge set (edges), computed
/// without the library's hashes.
struct Expected {
  std::vector<std::vector<FunctionKey>> stacks;
  std::vector<std::set<std::pair<FunctionKey, FunctionKey>>> edges;

  Expected(const FuzzThreads& in, ClassBy by) {
    for (const auto& s : in.streams) {
      if (by == ClassBy::kStack) stacks.push_back(parlot::fuzz::final_stack(s));
      if (by == ClassBy::kEdges) edges.push_back(edge_set(s));
    }
  }

  /// Whether threads i and j must share a class; `iff`: and must not when
  /// this is false.
  bool same(const FuzzThreads& in, std::size_t i, std::size_t j, const Options& o,
            bool& iff) const {
    switch (o.by) {
      case ClassBy::kTrace:
        iff = !o.malformed;
        return in.streams[i] == in.streams[j];
      case ClassBy::kStack:
        iff = true;
        return stacks[i] == stacks[j];
      case ClassBy::kEdges:
        iff = true;
        return edges[i] == edges[j];
      case ClassBy::kLoops:
        iff = false;
        return in.streams[i] == in.streams[j];
    }
    return false;
  }
};

void check_divergence(const std::vector<Event>& a, const std::vector<Event>& b, const Divergence& d,
                      std::size_t context) {
  PARLOT_FUZZ_CHECK(d.left_events == a.size());
  PARLOT_FUZZ_CHECK(d.right_events == b.size());
  std::map<FunctionKey, std::uint64_t> calls_a, calls_b;
  for (const Event& e : a) calls_a[e.function] += e.enter;
  for (const Event& e : b) calls_b[e.function] += e.enter;
  std::erase_if(calls_a, [](const auto& kv) { return kv.second == 0; });
  std::erase_if(calls_b, [](const auto& kv) { return kv.second == 0; });
  PARLOT_FUZZ_CHECK(d.left_calls == calls_a);
  PARLOT_FUZZ_CHECK(d.right_calls == calls_b);
  if (a == b) {
    PARLOT_FUZZ_CHECK(d.identical);
    return;
  }
  PARLOT_FUZZ_CHECK(!d.identical);
  const std::size_t p = d.position;
  PARLOT_FUZZ_CHECK(p <= a.size() && p <= b.size());
  PARLOT_FUZZ_CHECK(std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(p), b.begin()));
  PARLOT_FUZZ_CHECK(p == a.size() || p == b.size() || !(a[p] == b[p]));
  // Context: the common events just before, the stack there, each side's
  // events from the position on.
  const std::size_t nb = std::min(context, p);
  PARLOT_FUZZ_CHECK(d.before.size() == nb);
  for (std::size_t k = 0; k < nb; ++k) {
    PARLOT_FUZZ_CHECK(static_cast<const Event&>(d.before[k]) == a[p - nb + k]);
  }
  PARLOT_FUZZ_CHECK(d.stack ==
                    parlot::fuzz::final_stack(std::span(a).first(static_cast<std::size_t>(p))));
  PARLOT_FUZZ_CHECK(d.left.size() == std::min(context, a.size() - p));
  PARLOT_FUZZ_CHECK(d.right.size() == std::min(context, b.size() - p));
  for (std::size_t k = 0; k < d.left.size(); ++k) {
    PARLOT_FUZZ_CHECK(static_cast<const Event&>(d.left[k]) == a[p + k]);
  }
  for (std::size_t k = 0; k < d.right.size(); ++k) {
    PARLOT_FUZZ_CHECK(static_cast<const Event&>(d.right[k]) == b[p + k]);
  }
}

/// What the command computes and prints (without the trace directory's
/// labels); checks the invariants on the way.
std::string run_classes(const FuzzThreads& in, const Options& o) {
  const std::size_t n = in.ids.size();
  std::vector<std::uint64_t> hashes(n);
  for (std::size_t i = 0; i < n; ++i) hashes[i] = class_hash(in.streams[i], o);
  Classes classes;
  for (std::size_t i = 0; i < n; ++i) classes.add(in.ids[i], hashes[i]);
  const auto ordered = classes.ordered();

  // Partition, labels, order.
  std::size_t members = 0;
  const Classes::Class* largest = nullptr;
  std::set<char> labels;
  for (std::size_t c = 0; c < ordered.size(); ++c) {
    members += ordered[c].members.size();
    PARLOT_FUZZ_CHECK(!ordered[c].members.empty());
    if (c > 0) PARLOT_FUZZ_CHECK(ordered[c - 1].members.size() <= ordered[c].members.size());
    if (ordered[c].label == 'A') {
      PARLOT_FUZZ_CHECK(largest == nullptr);
      largest = &ordered[c];
    }
    if (ordered[c].label != '?') PARLOT_FUZZ_CHECK(labels.insert(ordered[c].label).second);
  }
  PARLOT_FUZZ_CHECK(members == n);
  PARLOT_FUZZ_CHECK((largest == nullptr) == (n == 0));
  for (const auto& c : ordered) PARLOT_FUZZ_CHECK(c.members.size() <= largest->members.size());
  std::map<ThreadId, std::size_t> class_of;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t found = 0;
    for (std::size_t c = 0; c < ordered.size(); ++c) {
      if (ordered[c].members.contains(in.ids[i])) {
        ++found;
        class_of[in.ids[i]] = c;
        PARLOT_FUZZ_CHECK(ordered[c].hash == hashes[i]);
      }
    }
    PARLOT_FUZZ_CHECK(found == 1);
  }

  // What a class means, per key.
  const Expected expected(in, o.by);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      bool iff = false;
      const bool must = expected.same(in, i, j, o, iff);
      const bool same = class_of[in.ids[i]] == class_of[in.ids[j]];
      if (must) PARLOT_FUZZ_CHECK(same);
      if (iff) PARLOT_FUZZ_CHECK(same == must);
    }
  }

  // Each class against class A, as the command prints it.
  std::map<ThreadId, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[in.ids[i]] = i;
  std::string text;
  for (const auto& c : ordered) {
    text += c.label;
    text += ": " + c.members.to_string(true) + " / " + c.members.to_string(false) + "\n";
    if (&c == largest) continue;
    const auto& a = in.streams[index.at(largest->members.first())];
    const auto& b = in.streams[index.at(c.members.first())];
    parlot::fuzz::VectorSource left(a), right(b);
    const Divergence d = first_divergence(left, right, o.context);
    check_divergence(a, b, d, o.context);
    const std::string described = describe_divergence(d, in.names, "class A", "class B");
    PARLOT_FUZZ_CHECK(!described.empty());
    text += described;
  }

  // --similarity's measure.
  for (std::size_t i = 0; i < n && i < 4; ++i) {
    const auto ei = edge_hashes(in.streams[i]);
    PARLOT_FUZZ_CHECK(jaccard(ei, ei) == 1);
    for (std::size_t j = 0; j < n && j < 4; ++j) {
      const auto ej = edge_hashes(in.streams[j]);
      const double s = jaccard(ei, ej);
      PARLOT_FUZZ_CHECK(s >= 0 && s <= 1 && s == jaccard(ej, ei));
    }
  }
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  static constexpr std::size_t kBatches[8] = {1, 2, 3, 7, 64, 255, 4096, ~std::size_t{0}};
  Options o;
  o.by = static_cast<ClassBy>(data[0] & 3);
  o.malformed = (data[0] & 4) != 0;
  o.context = (data[0] >> 3) & 3;
  o.batch = kBatches[data[0] >> 5];
  o.max_body = 1 + data[1] % 16;
  const FuzzThreads in = parlot::fuzz::threads_of({data + 2, size - 2}, o.malformed);
  const std::string first = run_classes(in, o);
  PARLOT_FUZZ_CHECK(first == run_classes(in, o));
  return 0;
}
