#include "divergence.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "indent.h"
#include "parlot/mark_cursor.h"
#include "stack_tree.h"

namespace parlot::analysis {
namespace {

/// "f", or "f at a.c:12" with a known site.
std::string with_site(std::string name, const std::string& site) {
  return site.empty() ? name : name + " at " + site;
}

/// Lines of a context event: its marks (at the depth inside which they
/// were made), then the event ("enter f at a.c:12" with `site`), each after
/// `prefix`.
std::string context_text(const ContextEvent& e, const NameTable& names, const char* prefix,
                         const std::string& site) {
  std::string out;
  const std::uint32_t depth = e.enter ? e.depth : e.depth + 1;
  for (const auto& label : e.marks_before) {
    out += prefix;
    append_indent(out, depth);
    out += "@ mark " + label + "\n";
  }
  out += prefix;
  append_indent(out, e.depth);
  return out + (e.enter ? "enter " : "exit  ") + with_site(names.name(e.function), site) + "\n";
}

/// One side of the comparison: its events with the marks before each.
class Side {
 public:
  explicit Side(EventSource& source)
      : source_(source), cursor_(source.marks()), has_marks_(!source.marks().empty()) {}
  bool next(ContextEvent& e) {
    e.marks_before.clear();
    if (!source_.next(e)) return false;
    e.site = e.enter ? source_.last_site() : 0;
    if (has_marks_ && cursor_.due(source_.last_index())) [[unlikely]] {
      cursor_.visit_until(source_.last_index(),
                          [&](const Mark& m) { e.marks_before.push_back(m.label); });
    }
    return true;
  }
  /// Counts the events left after the last next() (marks not followed)
  /// into `events` and their entries per function into `calls`.
  void count_rest(std::uint64_t& events, std::unordered_map<FunctionKey, std::uint64_t>& calls) {
    std::vector<Event> batch;
    while (source_.next_events(batch)) {
      events += batch.size();
      for (const Event& e : batch) {
        if (e.enter) ++calls[e.function];
      }
    }
  }
  std::vector<std::string> rest() {
    std::vector<std::string> labels;
    cursor_.visit_rest([&](const Mark& m) { labels.push_back(m.label); });
    return labels;
  }

 private:
  EventSource& source_;
  MarkCursor cursor_;
  bool has_marks_;
};

}  // namespace

Divergence first_divergence(EventSource& left_source, EventSource& right_source,
                            std::size_t context) {
  Divergence d;
  std::deque<ContextEvent> recent;
  OpenStack stack;
  std::vector<std::uint64_t> sites;  // of the left stream's open frames
  Side left(left_source), right(right_source);
  ContextEvent l{}, r{};
  bool has_l = left.next(l), has_r = right.next(r);
  // Counted in hash maps, returned in ordered maps.
  std::unordered_map<FunctionKey, std::uint64_t> left_calls, right_calls;
  auto count = [](std::unordered_map<FunctionKey, std::uint64_t>& calls, const Event& e) {
    if (e.enter) ++calls[e.function];
  };
  // Common prefix.
  while (has_l && has_r && static_cast<const Event&>(l) == static_cast<const Event&>(r)) {
    ++d.left_events, ++d.right_events;
    count(left_calls, l);
    count(right_calls, r);
    stack.push(l);
    if (l.enter) {
      sites.push_back(l.site);
    } else if (!sites.empty()) {
      sites.pop_back();
    }
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
    d.stack_sites = std::move(sites);
  }
  // Each side's context event by event (with its marks), then the rest in
  // batches: only counted (its marks are shown only when the context
  // reaches the side's end, and then there is no rest).
  for (; has_l && d.left.size() < context; has_l = left.next(l)) {
    ++d.left_events;
    count(left_calls, l);
    d.left.push_back(l);
  }
  if (has_l) {
    ++d.left_events;
    count(left_calls, l);
    left.count_rest(d.left_events, left_calls);
  }
  if (d.left_events - d.position <= context) d.left_end_marks = left.rest();
  for (; has_r && d.right.size() < context; has_r = right.next(r)) {
    ++d.right_events;
    count(right_calls, r);
    d.right.push_back(r);
  }
  if (has_r) {
    ++d.right_events;
    count(right_calls, r);
    right.count_rest(d.right_events, right_calls);
  }
  if (d.right_events - d.position <= context) d.right_end_marks = right.rest();
  d.left_calls.insert(left_calls.begin(), left_calls.end());
  d.right_calls.insert(right_calls.begin(), right_calls.end());
  return d;
}

std::string describe_divergence(const Divergence& d, const NameTable& names,
                                const std::string& left_label, const std::string& right_label,
                                const SiteText& site_text) {
  auto site = [&](bool left, std::uint64_t s) {
    return site_text && s != 0 ? site_text(left, s) : std::string();
  };
  if (d.identical) return fmt::format("identical ({} events)\n", d.left_events);
  std::string out = fmt::format("first divergence at event {} ({}: {} events, {}: {} events)\n",
                                d.position, left_label, d.left_events, right_label, d.right_events);
  out += "  call stack there:";
  if (d.stack.empty()) out += " (none)";
  // The frames' sites (a stack without them: all unknown).
  std::vector<std::string> sites(d.stack.size());
  for (std::size_t i = 0; i < d.stack.size() && i < d.stack_sites.size(); ++i) {
    sites[i] = site(true, d.stack_sites[i]);
  }
  for (std::size_t i = 0; i < d.stack.size();) {
    // A function's consecutive frames called from one site (a
    // recursion) as "f at a.c:3 x N".
    std::size_t j = i + 1;
    while (j < d.stack.size() && d.stack[j] == d.stack[i] && sites[j] == sites[i]) ++j;
    out += (i == 0 ? " " : " > ") + with_site(names.name(d.stack[i]), sites[i]);
    if (j - i > 1) out += fmt::format(" x {}", j - i);
    i = j;
  }
  out += "\n  common context before it:\n";
  for (const ContextEvent& e : d.before) out += context_text(e, names, "    ", site(true, e.site));
  auto side = [&](const std::string& label, const std::vector<ContextEvent>& events,
                  const std::vector<std::string>& end_marks, const char* prefix, bool left) {
    out += fmt::format("  {}:\n", label);
    for (const ContextEvent& e : events) out += context_text(e, names, prefix, site(left, e.site));
    for (const auto& m : end_marks) out += fmt::format("{}@ mark {}\n", prefix, m);
    if (events.empty()) out += "    (stream ends)\n";
  };
  side(left_label, d.left, d.left_end_marks, "  < ", true);
  side(right_label, d.right, d.right_end_marks, "  > ", false);
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
