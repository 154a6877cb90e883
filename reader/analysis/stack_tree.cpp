#include "stack_tree.h"

#include <fmt/format.h>

#include <algorithm>

namespace parlot::analysis {
namespace {

/// Children in name order (the map is in key order; equal names, which
/// only "#<hex>" fallbacks can make, stay in key order: deterministic).
std::vector<std::pair<std::string, const StackTree::Node*>> by_name(const StackTree::Node& n,
                                                                    const NameTable& names) {
  std::vector<std::pair<std::string, const StackTree::Node*>> out;
  for (const auto& [k, c] : n.children) out.emplace_back(names.name(k), &c);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::string dot_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

/// A node still to print, in pre-order.
struct Pending {
  const StackTree::Node* node;
  std::string name;
  int depth;   ///< text: 0 = the root's children
  int parent;  ///< DOT: the parent's node number (-1: none)
};

/// Pushes `n`'s children onto `todo` so they pop in name order.
void push_children(const StackTree::Node& n, int depth, int parent, const NameTable& names,
                   std::vector<Pending>& todo) {
  auto children = by_name(n, names);
  for (auto it = children.rbegin(); it != children.rend(); ++it) {
    todo.push_back({it->second, std::move(it->first), depth, parent});
  }
}

}  // namespace

StackTree::Node::~Node() {
  if (children.empty()) return;
  // Detach each level's child maps before they are destroyed, so no
  // destructor below finds children: constant native stack at any depth.
  std::vector<std::map<FunctionKey, Node>> pending(1);
  pending.back().swap(children);
  while (!pending.empty()) {
    std::map<FunctionKey, Node> level;
    level.swap(pending.back());
    pending.pop_back();
    for (auto& [key, child] : level) {
      if (!child.children.empty()) {
        pending.emplace_back();
        pending.back().swap(child.children);
      }
    }
  }
}

void StackTree::add(ThreadId thread, const std::vector<FunctionKey>& stack) {
  Node* n = &root_;
  n->threads.insert(thread);
  for (const FunctionKey f : stack) {
    n = &n->children[f];
    n->threads.insert(thread);
  }
  n->ending.insert(thread);
}

void StackTree::merge(const StackTree& other) {
  std::vector<std::pair<Node*, const Node*>> todo{{&root_, &other.root_}};
  while (!todo.empty()) {
    auto [into, from] = todo.back();
    todo.pop_back();
    into->threads.merge(from->threads);
    into->ending.merge(from->ending);
    for (const auto& [key, child] : from->children) todo.emplace_back(&into->children[key], &child);
  }
}

std::string StackTree::to_text(const NameTable& names, bool ranked) const {
  std::string out =
      fmt::format("{} thread{} ({})\n", root_.threads.size(), root_.threads.size() == 1 ? "" : "s",
                  root_.threads.to_string(ranked));
  std::vector<Pending> todo;
  push_children(root_, 1, -1, names, todo);
  while (!todo.empty()) {
    Pending p = std::move(todo.back());
    todo.pop_back();
    const StackTree::Node& n = *p.node;
    const std::string threads =
        fmt::format("[{} thread{}: {}]", n.threads.size(), n.threads.size() == 1 ? "" : "s",
                    n.threads.to_string(ranked));
    append_indent(out, static_cast<std::uint32_t>(p.depth));
    out += p.name + " " + threads;
    if (!n.ending.empty() && n.ending.size() != n.threads.size()) {
      out += fmt::format(" (stack ends here for {})", n.ending.to_string(ranked));
    }
    out += '\n';
    // A chain of frames of the same function for the same threads (a deep
    // recursion, as a stack overflow leaves): this one, a count, the last.
    const StackTree::Node* last = &n;
    int levels = 0;
    while (last->ending.empty() && last->children.size() == 1) {
      const auto& [key, child] = *last->children.begin();
      // A child's threads are among its parent's: the same count, the same set.
      if (child.threads.size() != n.threads.size() || names.name(key) != p.name) break;
      last = &child;
      ++levels;
    }
    if (levels + 1 >= static_cast<int>(kFoldedRun)) {
      append_indent(out, static_cast<std::uint32_t>(p.depth + 1));
      out += fmt::format("... {} more levels of {} {}\n", levels - 1, p.name, threads);
      todo.push_back({last, p.name, p.depth + levels, -1});
      continue;
    }
    push_children(n, p.depth + 1, -1, names, todo);
  }
  if (!root_.ending.empty()) {
    out += fmt::format("  (no open call: {})\n", root_.ending.to_string(ranked));
  }
  return out;
}

std::string StackTree::to_dot(const NameTable& names, bool ranked) const {
  std::string out = "digraph stacks {\n  node [shape=box];\n";
  // Node numbers in pre-order; each edge just before its child's subtree.
  std::vector<Pending> todo{{&root_, "all threads", 0, -1}};
  int next = 0;
  while (!todo.empty()) {
    Pending p = std::move(todo.back());
    todo.pop_back();
    const int id = next++;
    if (p.parent >= 0) {
      out += fmt::format("  n{} -> n{} [label=\"{}\"];\n", p.parent, id, p.node->threads.size());
    }
    out += fmt::format("  n{} [label=\"{}\\n{}: {}\"];\n", id, dot_escape(p.name),
                       p.node->threads.size(), dot_escape(p.node->threads.to_string(ranked)));
    push_children(*p.node, 0, id, names, todo);
  }
  out += "}\n";
  return out;
}

}  // namespace parlot::analysis
