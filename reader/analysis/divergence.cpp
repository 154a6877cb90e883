#include "divergence.h"

#include <fmt/format.h>

#include <algorithm>

#include "stack_tree.h"

namespace parlot::analysis {
namespace {

std::string event_text(const Event& e, const NameTable& names) {
  return fmt::format("{:{}}{} {}", "", 2 * e.depth, e.enter ? "enter" : "exit ",
                     names.name(e.function));
}

}  // namespace

Divergence first_divergence(EventSource& left, EventSource& right, std::size_t context) {
  Divergence d;
  std::deque<Event> recent;
  OpenStack stack;
  Event l{}, r{};
  bool has_l = left.next(l), has_r = right.next(r);
  auto count = [](std::map<FunctionKey, std::uint64_t>& calls, const Event& e) {
    if (e.enter) ++calls[e.function];
  };
  // Common prefix.
  while (has_l && has_r && l == r) {
    ++d.left_events, ++d.right_events;
    count(d.left_calls, l);
    count(d.right_calls, r);
    stack.push(l);
    recent.push_back(l);
    if (recent.size() > context) recent.pop_front();
    has_l = left.next(l);
    has_r = right.next(r);
  }
  d.position = d.left_events;
  d.identical = !has_l && !has_r;
  if (!d.identical) {
    d.before.assign(recent.begin(), recent.end());
    d.stack = stack.frames();
  }
  for (; has_l; has_l = left.next(l)) {
    ++d.left_events;
    count(d.left_calls, l);
    if (d.left.size() < context) d.left.push_back(l);
  }
  for (; has_r; has_r = right.next(r)) {
    ++d.right_events;
    count(d.right_calls, r);
    if (d.right.size() < context) d.right.push_back(r);
  }
  return d;
}

std::string describe_divergence(const Divergence& d, const NameTable& names,
                                const std::string& left_label, const std::string& right_label) {
  if (d.identical) return fmt::format("identical ({} events)\n", d.left_events);
  std::string out = fmt::format("first divergence at event {} ({}: {} events, {}: {} events)\n",
                                d.position, left_label, d.left_events, right_label, d.right_events);
  out += "  call stack there:";
  if (d.stack.empty()) out += " (none)";
  for (const FunctionKey f : d.stack) out += " " + names.name(f);
  out += "\n  common context before it:\n";
  for (const Event& e : d.before) out += "    " + event_text(e, names) + "\n";
  out += fmt::format("  {}:\n", left_label);
  if (d.left.empty()) out += "    (stream ends)\n";
  for (const Event& e : d.left) out += "  < " + event_text(e, names) + "\n";
  out += fmt::format("  {}:\n", right_label);
  if (d.right.empty()) out += "    (stream ends)\n";
  for (const Event& e : d.right) out += "  > " + event_text(e, names) + "\n";
  std::string deltas;
  std::map<FunctionKey, bool> all;
  for (const auto& [f, n] : d.left_calls) all[f];
  for (const auto& [f, n] : d.right_calls) all[f];
  std::vector<std::pair<std::string, std::string>> lines;
  for (const auto& [f, unused] : all) {
    const auto lit = d.left_calls.find(f);
    const auto rit = d.right_calls.find(f);
    const std::uint64_t a = lit == d.left_calls.end() ? 0 : lit->second;
    const std::uint64_t b = rit == d.right_calls.end() ? 0 : rit->second;
    if (a != b) {
      lines.emplace_back(names.name(f), fmt::format("{:>12} {:>12} {:>+12}", a, b,
                                                    static_cast<std::int64_t>(b - a)));
    }
  }
  std::sort(lines.begin(), lines.end());
  if (!lines.empty()) {
    out += fmt::format(
        "  calls per function that differ (left: {}, right: {}):\n  {:>12} {:>12} {:>12}  "
        "function\n",
        left_label, right_label, "left", "right", "delta");
    for (const auto& [name, counts] : lines) out += "  " + counts + "  " + name + "\n";
  }
  return out;
}

}  // namespace parlot::analysis
