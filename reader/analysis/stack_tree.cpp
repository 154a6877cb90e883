#include "stack_tree.h"

#include <fmt/format.h>

#include <algorithm>

namespace parlot::analysis {
namespace {

/// Children in name order (the map is in key-hash order).
std::vector<std::pair<std::string, const StackTree::Node*>> by_name(const StackTree::Node& n,
                                                                    const NameTable& names) {
  std::vector<std::pair<std::string, const StackTree::Node*>> out;
  for (const auto& [k, c] : n.children) out.emplace_back(names.name(k), &c);
  std::sort(out.begin(), out.end());
  return out;
}

void merge_node(StackTree::Node& into, const StackTree::Node& from) {
  into.threads.merge(from.threads);
  into.ending.merge(from.ending);
  for (const auto& [key, child] : from.children) merge_node(into.children[key], child);
}

void text_node(const StackTree::Node& n, const std::string& name, int depth, const NameTable& names,
               bool ranked, std::string& out) {
  out += fmt::format("{:{}}{} [{} thread{}: {}]", "", 2 * depth, name, n.threads.size(),
                     n.threads.size() == 1 ? "" : "s", n.threads.to_string(ranked));
  if (!n.ending.empty() && n.ending.size() != n.threads.size()) {
    out += fmt::format(" (stack ends here for {})", n.ending.to_string(ranked));
  }
  out += '\n';
  for (const auto& [name_of_child, c] : by_name(n, names)) {
    text_node(*c, name_of_child, depth + 1, names, ranked, out);
  }
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

void dot_node(const StackTree::Node& n, const std::string& label, int id, int& next,
              std::string& out, const NameTable& names, bool ranked) {
  out += fmt::format("  n{} [label=\"{}\\n{}: {}\"];\n", id, dot_escape(label), n.threads.size(),
                     dot_escape(n.threads.to_string(ranked)));
  for (const auto& [name, c] : by_name(n, names)) {
    const int child = next++;
    out += fmt::format("  n{} -> n{} [label=\"{}\"];\n", id, child, c->threads.size());
    dot_node(*c, name, child, next, out, names, ranked);
  }
}

}  // namespace

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
  merge_node(root_, other.root_);
}

std::string StackTree::to_text(const NameTable& names, bool ranked) const {
  std::string out =
      fmt::format("{} thread{} ({})\n", root_.threads.size(), root_.threads.size() == 1 ? "" : "s",
                  root_.threads.to_string(ranked));
  for (const auto& [name, c] : by_name(root_, names)) text_node(*c, name, 1, names, ranked, out);
  if (!root_.ending.empty()) {
    out += fmt::format("  (no open call: {})\n", root_.ending.to_string(ranked));
  }
  return out;
}

std::string StackTree::to_dot(const NameTable& names, bool ranked) const {
  std::string out = "digraph stacks {\n  node [shape=box];\n";
  int next = 1;
  dot_node(root_, "all threads", 0, next, out, names, ranked);
  out += "}\n";
  return out;
}

}  // namespace parlot::analysis
