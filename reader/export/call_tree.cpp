#include "call_tree.h"

#include <map>

namespace parlot::exporter {

void ThreadCallTree::enter(std::uint32_t function_id, std::uint64_t time) {
  const std::uint32_t parent = open_.empty() ? kRoot : open_.back().node;
  const std::uint64_t key = static_cast<std::uint64_t>(parent) << 32 | function_id;
  auto [it, added] = children_.try_emplace(key, static_cast<std::uint32_t>(nodes_.size()));
  if (added) nodes_.push_back({parent, function_id, {}});
  open_.push_back({it->second, time, 0});
}

void ThreadCallTree::exit(std::uint64_t time) {
  if (open_.empty()) return;
  const Open call = open_.back();
  open_.pop_back();
  const std::uint64_t inclusive = time >= call.entered ? time - call.entered : 0;
  PathCost& cost = nodes_[call.node].cost;
  cost.calls += 1;
  cost.inclusive += inclusive;
  cost.exclusive += inclusive >= call.callees ? inclusive - call.callees : 0;
  if (!open_.empty()) open_.back().callees += inclusive;
}

void ThreadCallTree::close_all(std::uint64_t time) {
  while (!open_.empty()) exit(time);
}

FunctionKey CallTree::key_of(const FunctionInfo& f) {
  std::string key = f.name;
  key += '\0';
  key += f.file;
  key += '\0';
  key += std::to_string(f.line);
  auto [it, added] = function_keys_.try_emplace(key, static_cast<FunctionKey>(functions_.size()));
  if (added) functions_.push_back(f);
  return it->second;
}

void CallTree::merge(const ThreadCallTree& thread, FunctionSource& functions) {
  const auto& from = thread.nodes();
  std::vector<std::uint32_t> mapped(from.size(), kRoot);
  for (std::size_t i = 1; i < from.size(); ++i) {  // parents precede children
    const std::uint32_t parent = mapped[from[i].parent];
    const FunctionKey f = key_of(functions.function(from[i].function));
    const std::uint64_t key = static_cast<std::uint64_t>(parent) << 32 | f;
    auto [it, added] = children_.try_emplace(key, static_cast<std::uint32_t>(nodes_.size()));
    if (added) {
      nodes_.push_back({parent, f, nodes_[parent].depth + 1, {}, {}});
      nodes_[parent].children.push_back(it->second);
    }
    nodes_[it->second].cost.add(from[i].cost);
    mapped[i] = it->second;
  }
}

std::vector<CallTree::FunctionTotals> CallTree::function_totals() const {
  std::vector<FunctionTotals> totals(functions_.size());
  std::vector<std::uint32_t> on_path(functions_.size(), 0);
  // Depth-first, iteratively (trees of deep recursion are deep).
  struct Frame {
    std::uint32_t node;
    std::size_t next_child;
  };
  std::vector<Frame> stack{{kRoot, 0}};
  while (!stack.empty()) {
    Frame& top = stack.back();
    const Node& n = nodes_[top.node];
    if (top.next_child == 0 && top.node != kRoot) {
      FunctionTotals& t = totals[n.function];
      t.calls += n.cost.calls;
      t.exclusive += n.cost.exclusive;
      if (on_path[n.function] == 0) t.inclusive += n.cost.inclusive;
      if (n.depth > t.max_depth) t.max_depth = n.depth;
      ++on_path[n.function];
    }
    if (top.next_child < n.children.size()) {
      const std::uint32_t child = n.children[top.next_child++];
      stack.push_back({child, 0});
      continue;
    }
    if (top.node != kRoot) --on_path[n.function];
    stack.pop_back();
  }
  return totals;
}

std::vector<CallTree::Arc> CallTree::arcs() const {
  std::map<std::pair<FunctionKey, FunctionKey>, PathCost> by_pair;
  for (std::size_t i = 1; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (n.parent == kRoot) continue;
    PathCost& c = by_pair[{nodes_[n.parent].function, n.function}];
    c.calls += n.cost.calls;
    c.inclusive += n.cost.inclusive;
  }
  std::vector<Arc> out;
  out.reserve(by_pair.size());
  for (const auto& [pair, cost] : by_pair) out.push_back({pair.first, pair.second, cost});
  return out;
}

}  // namespace parlot::exporter
