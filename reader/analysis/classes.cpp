#include "classes.h"

#include <algorithm>
#include <stdexcept>

namespace parlot::analysis {

ClassBy parse_class_by(const std::string& by) {
  if (by == "trace") return ClassBy::kTrace;
  if (by == "loops") return ClassBy::kLoops;
  if (by == "edges") return ClassBy::kEdges;
  if (by == "stack") return ClassBy::kStack;
  throw std::invalid_argument("unknown class key '" + by + "'");
}

std::uint64_t FingerprintBuilder::edge_hash(FunctionKey caller, FunctionKey callee) {
  std::uint64_t h = caller * 0x9e3779b97f4a7c15ull ^ (callee + 0x632be59bd9b4e019ull);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 27);
}

void FingerprintBuilder::push(std::span<const Event> events) {
  if (by_ != ClassBy::kTrace) {
    for (const Event& e : events) push(e);
    return;
  }
  // The same hash as push(e), with the state in registers.
  std::uint64_t h = trace_;
  for (const Event& e : events) {
    h = trace_step(h, e.enter ? e.function : kExitWord);
  }
  trace_ = h;
  events_ += events.size();
}

std::uint64_t FingerprintBuilder::finish() {
  switch (by_) {
    case ClassBy::kTrace:
      return trace_ ^ (events_ * 0x94d049bb133111ebull);
    case ClassBy::kEdges: {
      // Order-independent: sum and xor of the distinct edges' hashes.
      std::uint64_t sum = 0, x = edges_.size();
      for (const std::uint64_t e : edges_) sum += e, x ^= e * 0x2545f4914f6cdd1dull;
      return sum ^ (x << 1);
    }
    case ClassBy::kStack: {
      std::uint64_t h = 0x811c9dc5;
      for (const FunctionKey f : stack_.frames()) h = (h ^ f) * 0x100000001b3ull;
      return h ^ stack_.frames().size();
    }
    case ClassBy::kLoops:
      return loops_.finish().structure_hash();
  }
  return 0;
}

void Classes::merge(const Classes& other) {
  for (const auto& [h, members] : other.by_hash_) by_hash_[h].merge(members);
}

std::vector<Classes::Class> Classes::ordered() const {
  std::vector<Class> out;
  for (const auto& [h, members] : by_hash_) out.push_back({h, members, 'A'});
  // Labels by size, largest first.
  std::sort(out.begin(), out.end(), [](const Class& a, const Class& b) {
    if (a.members.size() != b.members.size()) return a.members.size() > b.members.size();
    return a.members.first() < b.members.first();
  });
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i].label = i < 26 ? static_cast<char>('A' + i) : '?';
  std::reverse(out.begin(), out.end());
  std::stable_sort(out.begin(), out.end(), [](const Class& a, const Class& b) {
    if (a.members.size() != b.members.size()) return a.members.size() < b.members.size();
    return a.members.first() < b.members.first();
  });
  return out;
}

double jaccard(const std::unordered_set<std::uint64_t>& a,
               const std::unordered_set<std::uint64_t>& b) {
  if (a.empty() && b.empty()) return 1;
  std::size_t common = 0;
  for (const auto v : a) common += b.contains(v) ? 1 : 0;
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

}  // namespace parlot::analysis
