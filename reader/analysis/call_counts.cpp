#include "call_counts.h"

#include <limits>

namespace parlot::analysis {
namespace {

std::uint64_t edge_slot_hash(std::uint32_t caller, std::uint32_t callee) {
  std::uint64_t h = (std::uint64_t{caller} << 32 | callee) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

}  // namespace

CallCounts::CallCounts(std::uint64_t function_count)
    : last_(static_cast<std::size_t>(function_count) + 1, 0), table_(64, 0) {
  // The sentinel: callee 0 is never entered, so it matches no entry.
  edges_.push_back({std::numeric_limits<std::uint32_t>::max(), 0, 0});
}

void CallCounts::add_slow(std::uint32_t caller, std::uint32_t callee) {
  const std::size_t mask = table_.size() - 1;
  std::size_t i = static_cast<std::size_t>(edge_slot_hash(caller, callee)) & mask;
  for (;; i = (i + 1) & mask) {
    const std::uint32_t k = table_[i];
    if (k == 0) break;
    if (edges_[k].caller == caller && edges_[k].callee == callee) {
      ++edges_[k].calls;
      if (callee < last_.size()) last_[callee] = k;
      return;
    }
  }
  const auto k = static_cast<std::uint32_t>(edges_.size());
  edges_.push_back({caller, callee, 1});
  table_[i] = k;
  if (callee < last_.size()) last_[callee] = k;
  if (edges_.size() * 2 > table_.size()) grow();
}

void CallCounts::grow() {
  std::vector<std::uint32_t> bigger(table_.size() * 2, 0);
  const std::size_t mask = bigger.size() - 1;
  for (std::uint32_t k = 1; k < edges_.size(); ++k) {
    std::size_t i =
        static_cast<std::size_t>(edge_slot_hash(edges_[k].caller, edges_[k].callee)) & mask;
    while (bigger[i] != 0) i = (i + 1) & mask;
    bigger[i] = k;
  }
  table_ = std::move(bigger);
}

}  // namespace parlot::analysis
