// Calling-context trees: one node per distinct call path (root -> ... ->
// function), with calls and inclusive and exclusive cost. Built per thread
// from the event stream on function IDs (ThreadCallTree), then merged by
// name, file and line into one tree for the whole export (CallTree), since
// function IDs differ between processes. Folded stacks, callgrind, dot,
// hatchet and report are all views of a CallTree.
//
// Cost is measured on the export's time axis: exit time minus entry time.
// On the logical clock (event index) a call without callees costs 1 event,
// and in general 1 + 2 x the calls made below it (their entries and exits).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporter.h"

namespace parlot::exporter {

/// Metrics of one call path.
struct PathCost {
  std::uint64_t calls = 0;      ///< calls made along exactly this path
  std::uint64_t inclusive = 0;  ///< cost of those calls, their callees included
  std::uint64_t exclusive = 0;  ///< inclusive minus the callees' inclusive cost
  void add(const PathCost& o) {
    calls += o.calls;
    inclusive += o.inclusive;
    exclusive += o.exclusive;
  }
};

/// The call tree of one thread, on function IDs. Feed it a well-nested
/// stream: enter/exit with times on one axis, non-decreasing.
class ThreadCallTree {
 public:
  struct Node {
    std::uint32_t parent;    ///< node index; kRoot's own parent is kRoot
    std::uint32_t function;  ///< function ID (0 for the root)
    PathCost cost;
  };
  static constexpr std::uint32_t kRoot = 0;

  ThreadCallTree() { nodes_.push_back({kRoot, 0, {}}); }

  void enter(std::uint32_t function_id, std::uint64_t time);
  /// Exit of the innermost open call. Ignored when nothing is open.
  void exit(std::uint64_t time);
  /// Closes every open call at `time`.
  void close_all(std::uint64_t time);

  /// Nodes, index 0 = the root (no function); a parent precedes its children.
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  struct Open {
    std::uint32_t node;
    std::uint64_t entered;
    std::uint64_t callees;  ///< inclusive cost of the calls it made so far
  };
  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, std::uint32_t> children_;  // parent << 32 | function -> node
  std::vector<Open> open_;
};

/// Index of a distinct function (name, file, line) in a CallTree.
using FunctionKey = std::uint32_t;

/// A call tree merged over threads and processes, on functions identified
/// by name, file and line.
class CallTree {
 public:
  struct Node {
    std::uint32_t parent;
    FunctionKey function;  ///< meaningless for the root
    std::uint32_t depth;   ///< 0 for the root, 1 for outermost calls
    PathCost cost;
    std::vector<std::uint32_t> children;  ///< in order of first appearance
  };
  static constexpr std::uint32_t kRoot = 0;

  CallTree() { nodes_.push_back({kRoot, 0, 0, {}, {}}); }

  /// Adds `thread`, naming its function IDs with `functions`.
  void merge(const ThreadCallTree& thread, FunctionSource& functions);

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<FunctionInfo>& functions() const { return functions_; }

  /// Per function: calls, exclusive cost, and inclusive cost counted once
  /// per outermost activation (a recursive function's inner calls add no
  /// inclusive cost), and the deepest call depth (1 = outermost).
  struct FunctionTotals {
    std::uint64_t calls = 0;
    std::uint64_t inclusive = 0;
    std::uint64_t exclusive = 0;
    std::uint32_t max_depth = 0;
  };
  std::vector<FunctionTotals> function_totals() const;

  /// Caller -> callee arcs with the calls and inclusive cost of the callee
  /// along them. Calls from the root (outermost calls) are not arcs.
  struct Arc {
    FunctionKey caller;
    FunctionKey callee;
    PathCost cost;  ///< exclusive is left 0
  };
  std::vector<Arc> arcs() const;

 private:
  FunctionKey key_of(const FunctionInfo& f);

  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, std::uint32_t> children_;  // parent << 32 | key -> node
  std::vector<FunctionInfo> functions_;
  std::unordered_map<std::string, FunctionKey> function_keys_;
};

}  // namespace parlot::exporter
