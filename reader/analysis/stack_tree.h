// STAT-like prefix tree of call stacks (issue 9 §3): the open call stack of
// every thread at the end of its trace, merged over threads and ranks, with
// the set of threads at every node.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "event.h"
#include "indent.h"
#include "thread_set.h"

namespace parlot::analysis {

/// Follows one thread's events and keeps its open call stack.
class OpenStack {
 public:
  void push(const Event& e) {
    if (e.enter) {
      stack_.push_back(e.function);
    } else if (!stack_.empty()) {
      stack_.pop_back();
    }
  }
  /// Outermost first.
  const std::vector<FunctionKey>& frames() const { return stack_; }

 private:
  std::vector<FunctionKey> stack_;
};

/// Every operation walks the tree with an explicit stack, never by
/// recursion: a thread that died of a stack overflow leaves a stack of
/// 10^5-10^6 frames (the reader accepts up to 2^26).
class StackTree {
 public:
  struct Node {
    ThreadSet threads;  ///< threads whose stack passes through (or ends at) this node
    ThreadSet ending;   ///< threads whose stack ends exactly here
    std::map<FunctionKey, Node> children;

    Node() = default;
    Node(const Node&) = default;
    Node(Node&&) = default;
    Node& operator=(const Node&) = default;
    Node& operator=(Node&&) = default;
    /// Takes the descendants apart level by level (no recursion).
    ~Node();
  };

  /// Text lines are indented two spaces per depth up to this depth, and
  /// no further (deeper lines say their depth): the text stays linear in
  /// the number of nodes on a 10^6-deep stack.
  static constexpr int kMaxIndentDepth = static_cast<int>(analysis::kMaxIndentDepth);

  /// Adds `thread`'s stack (outermost first). An empty stack (the thread
  /// returned from everything) counts at the root only.
  void add(ThreadId thread, const std::vector<FunctionKey>& stack);
  void merge(const StackTree& other);
  const Node& root() const { return root_; }

  /// Indented text: one line per node, "<name> [<count> threads: <ranges>]",
  /// below kMaxIndentDepth "[depth <d>] <name> [...]". A chain of at least
  /// kFoldedRun (indent.h) nodes of one function for the same threads (a deep
  /// recursion) prints as its first node, "... N more levels of <name>
  /// [...]" one level inside, and its last node at its own depth.
  /// `ranked`: see ThreadSet::to_string().
  std::string to_text(const NameTable& names, bool ranked = true) const;
  /// Graphviz DOT: one node per tree node, labelled with the function name
  /// and the thread ranges.
  std::string to_dot(const NameTable& names, bool ranked = true) const;

 private:
  Node root_;
};

}  // namespace parlot::analysis
