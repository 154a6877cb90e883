#include "loop_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "hash_mix.h"
#include "indent.h"

namespace parlot::analysis {
namespace {

using Item = LoopSummary::Item;

/// Per call and body ID of one summary: a hash of its exact content
/// (counts included), a hash of its shape (counts left out) and the events
/// it stands for; comparable across summaries. Computed on first use, once per ID, in
/// post-order over the (acyclic) ID graph.
class SummaryHashes {
 public:
  explicit SummaryHashes(const LoopSummary& s)
      : s_(s),
        call_(s.calls().size()),
        body_(s.bodies().size()),
        call_done_(s.calls().size(), false),
        body_done_(s.bodies().size(), false) {}

  struct Info {
    std::uint64_t exact = 0, shape = 0, events = 0;
  };

  /// Exact hash of an item (loop counts included).
  std::uint64_t exact(const Item& i) {
    return i.loop ? mix(mix(2, body(i.id).exact), i.count) : mix(1, call(i.id).exact);
  }
  /// Key two items must share to be aligned: the callee of a call, the
  /// count-free shape of a loop's body.
  std::uint64_t key(const Item& i) {
    return i.loop ? mix(4, body(i.id).shape) : mix(3, s_.calls()[i.id].function);
  }
  std::uint64_t events(const Item& i) {
    return i.loop ? i.count * body(i.id).events : call(i.id).events;
  }

  const Info& call(std::uint32_t id) {
    compute(Item{false, id, 1});
    return call_[id];
  }
  const Info& body(std::uint32_t id) {
    compute(Item{true, id, 2});
    return body_[id];
  }

 private:
  /// Infos of `root` and everything below it not computed yet, post-order
  /// (LoopSummary::post_order: no native recursion, nesting as deep as the
  /// trace's call stack).
  void compute(const Item& root) {
    s_.post_order(
        root, [&](const Item& i) { return i.loop ? body_done_[i.id] : call_done_[i.id]; },
        [&](const Item& owner) {
          if (owner.loop) {
            body_[owner.id] = list(s_.bodies()[owner.id]);
            body_done_[owner.id] = true;
            return;
          }
          const LoopSummary::Call& c = s_.calls()[owner.id];
          const Info b = list(c.body);
          call_[owner.id] = {mix(mix(c.function, c.open ? 1 : 2), b.exact),
                             mix(mix(c.function, c.open ? 1 : 2), b.shape),
                             b.events + (c.open ? 1 : 2)};
          call_done_[owner.id] = true;
        });
  }

  /// The info of a list whose items' infos are all computed.
  Info list(const std::vector<Item>& items) const {
    Info r{0x51ed27, 0x51ed27, 0};
    for (const Item& i : items) {
      if (i.loop) {
        const Info& b = body_[i.id];
        r.exact = mix(r.exact, mix(mix(2, b.exact), i.count));
        r.shape = mix(r.shape, mix(2, b.shape));
        r.events += i.count * b.events;
      } else {
        const Info& c = call_[i.id];
        r.exact = mix(r.exact, mix(1, c.exact));
        r.shape = mix(r.shape, mix(1, c.shape));
        r.events += c.events;
      }
    }
    return r;
  }

  const LoopSummary& s_;
  std::vector<Info> call_, body_;
  std::vector<bool> call_done_, body_done_;
};

class Differ {
 public:
  Differ(const LoopSummary& left, const LoopSummary& right, const NameTable& names,
         const LoopDiffOptions& o)
      : left_(left), right_(right), lh_(left), rh_(right), names_(names), o_(o) {}

  /// Diffs the two top lists and, where aligned items differ, the lists
  /// inside them. Each level's output is a list of steps (a line, or two
  /// lists to diff in its place), expanded in order from an explicit stack:
  /// no native recursion, as the nesting can be as deep as the trace's call
  /// stack.
  void diff(const std::vector<Item>& a, const std::vector<Item>& b) {
    struct Level {
      std::vector<Step> steps;
      std::size_t next = 0;
    };
    std::vector<Level> todo(1);
    todo[0].steps.push_back({' ', 0, {}, &a, &b});
    while (!todo.empty()) {
      Level& level = todo.back();
      if (level.next == level.steps.size()) {
        todo.pop_back();
        continue;
      }
      Step step = std::move(level.steps[level.next++]);
      if (step.a == nullptr) {
        lines_.push_back({step.side, step.depth, std::move(step.text)});
        continue;
      }
      Level sub;
      steps_ = &sub.steps;
      diff_lists(*step.a, *step.b, step.depth);
      todo.push_back(std::move(sub));
    }
  }

  /// The lines; none when nothing differed.
  std::vector<LoopDiffLine> take() {
    if (changes_ == 0) lines_.clear();
    return std::move(lines_);
  }

 private:
  /// One step of a level's output: a line, or (when `a` is set) the lists
  /// `a` and `b` to diff at `depth`, whose lines go in its place.
  struct Step {
    char side;
    std::uint32_t depth;
    std::string text;
    const std::vector<Item>* a = nullptr;
    const std::vector<Item>* b = nullptr;
  };

  // Writes the steps of diffing `a` against `b` to *steps_.
  void diff_lists(const std::vector<Item>& a, const std::vector<Item>& b, std::uint32_t depth) {
    std::vector<std::uint64_t> ka(a.size()), kb(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) ka[i] = lh_.key(a[i]);
    for (std::size_t j = 0; j < b.size(); ++j) kb[j] = rh_.key(b[j]);
    std::vector<std::uint8_t> ops;
    if (!shortest_edit_script(ka, kb, o_.max_edits, ops)) {
      // Too different to align within the bound: a common prefix and
      // suffix, the middle replaced.
      std::size_t p = 0, s = 0;
      while (p < a.size() && p < b.size() && ka[p] == kb[p]) ++p;
      while (s < a.size() - p && s < b.size() - p && ka[a.size() - 1 - s] == kb[b.size() - 1 - s]) {
        ++s;
      }
      ops.assign(p, 0);
      ops.insert(ops.end(), a.size() - p - s, 1);
      ops.insert(ops.end(), b.size() - p - s, 2);
      ops.insert(ops.end(), s, 0);
    }
    // Walk the script: runs of kept items with equal content are context;
    // kept items whose content differs are descended into; a gap of
    // deletions and insertions pairs loops with loops when both sides of
    // the gap are loops only, one for one.
    std::size_t i = 0, j = 0;
    bool change_before = false;
    std::vector<std::size_t> same, gap_a, gap_b;  // pending equal items (index into a), the gap
    auto flush_gap = [&] {
      if (gap_a.empty() && gap_b.empty()) return;
      flush_same(a, same, depth, change_before, true);
      change_before = true;
      ++changes_;
      bool pair_loops = gap_a.size() == gap_b.size();
      for (std::size_t n = 0; pair_loops && n < gap_a.size(); ++n) {
        pair_loops = a[gap_a[n]].loop && b[gap_b[n]].loop;
      }
      if (pair_loops) {
        for (std::size_t n = 0; n < gap_a.size(); ++n) changed(a[gap_a[n]], b[gap_b[n]], depth);
      } else {
        for (const std::size_t x : gap_a) {
          line('<', depth, left_.item_to_string(a[x], names_, o_.max_text));
        }
        for (const std::size_t y : gap_b) {
          line('>', depth, right_.item_to_string(b[y], names_, o_.max_text));
        }
      }
      gap_a.clear();
      gap_b.clear();
    };
    for (const std::uint8_t op : ops) {
      if (op == 1) {
        gap_a.push_back(i++);
      } else if (op == 2) {
        gap_b.push_back(j++);
      } else if (lh_.exact(a[i]) == rh_.exact(b[j])) {
        flush_gap();
        same.push_back(i++);
        ++j;
      } else {
        flush_gap();
        flush_same(a, same, depth, change_before, true);
        change_before = true;
        ++changes_;
        changed(a[i++], b[j++], depth);
      }
    }
    flush_gap();
    flush_same(a, same, depth, change_before, false);
  }

  void line(char side, std::uint32_t depth, std::string text) {
    steps_->push_back({side, depth, std::move(text)});
  }

  // Prints the pending common items: `context` after the previous change
  // (when `after`), `context` before the next one (when `before`), the rest
  // as one "... N common items (E events)" line.
  void flush_same(const std::vector<Item>& a, std::vector<std::size_t>& same, std::uint32_t depth,
                  bool after, bool before) {
    if (same.empty()) return;
    const std::size_t n = same.size();
    const std::size_t head = after ? std::min(o_.context, n) : 0;
    const std::size_t tail = before ? std::min(o_.context, n - head) : 0;
    for (std::size_t k = 0; k < head; ++k) {
      line(' ', depth, left_.item_to_string(a[same[k]], names_, o_.max_text));
    }
    if (n > head + tail) {
      std::uint64_t events = 0;
      for (std::size_t k = head; k < n - tail; ++k) events += lh_.events(a[same[k]]);
      const std::size_t skipped = n - head - tail;
      line(' ', depth,
           fmt::format("... {} common item{} ({} events)", skipped, skipped == 1 ? "" : "s",
                       events));
    }
    for (std::size_t k = n - tail; k < n; ++k) {
      line(' ', depth, left_.item_to_string(a[same[k]], names_, o_.max_text));
    }
    same.clear();
  }

  // Two aligned items whose content differs.
  void changed(const Item& x, const Item& y, std::uint32_t depth) {
    if (!x.loop) {
      // Calls of the same function: descend into their bodies.
      const auto& cx = left_.calls()[x.id];
      const auto& cy = right_.calls()[y.id];
      line(' ', depth, names_.name(cx.function) + " {");
      steps_->push_back({' ', depth + 1, {}, &cx.body, &cy.body});
      if (cx.open == cy.open) {
        line(' ', depth, cx.open ? "..." : "}");
      } else {
        line('<', depth, cx.open ? "..." : "}");
        line('>', depth, cy.open ? "..." : "}");
      }
      return;
    }
    const auto& bx = left_.bodies()[x.id];
    const auto& by = right_.bodies()[y.id];
    if (lh_.body(x.id).exact == rh_.body(y.id).exact) {
      // The same body, other counts: "1000 x [ ... ]" against "999 x [ ... ]".
      line('<', depth, left_.item_to_string(x, names_, o_.max_text));
      line('>', depth, right_.item_to_string(y, names_, o_.max_text));
      return;
    }
    if (x.count == y.count) {
      line(' ', depth, fmt::format("{} x [", x.count));
    } else {
      line('<', depth, fmt::format("{} x [", x.count));
      line('>', depth, fmt::format("{} x [", y.count));
    }
    steps_->push_back({' ', depth + 1, {}, &bx, &by});
    line(' ', depth, "]");
  }

  const LoopSummary& left_;
  const LoopSummary& right_;
  SummaryHashes lh_, rh_;
  const NameTable& names_;
  const LoopDiffOptions& o_;
  std::vector<LoopDiffLine> lines_;
  std::vector<Step>* steps_ = nullptr;  // output of the diff_lists running
  std::size_t changes_ = 0;
};

}  // namespace

bool shortest_edit_script(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b,
                          std::size_t max_edits, std::vector<std::uint8_t>& ops) {
  ops.clear();
  const std::int64_t n = static_cast<std::int64_t>(a.size());
  const std::int64_t m = static_cast<std::int64_t>(b.size());
  // Bounded work: at most max_edits rounds, and about 10^8 snake steps.
  const std::int64_t limit = std::min({n + m, static_cast<std::int64_t>(max_edits),
                                       std::max<std::int64_t>(16, 100'000'000 / (n + m + 1))});
  // v[k + offset]: furthest x on diagonal k; trace[d]: v after round d.
  const std::int64_t offset = limit + 1;
  std::vector<std::int64_t> v(2 * static_cast<std::size_t>(offset) + 1, 0);
  std::vector<std::vector<std::int32_t>> trace;  // lists are under 2^31 items
  std::int64_t found = -1;
  for (std::int64_t d = 0; d <= limit && found < 0; ++d) {
    for (std::int64_t k = -d; k <= d; k += 2) {
      std::int64_t x = (k == -d || (k != d && v[k - 1 + offset] < v[k + 1 + offset]))
                           ? v[k + 1 + offset]
                           : v[k - 1 + offset] + 1;
      std::int64_t y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      v[k + offset] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    trace.emplace_back(v.begin() + (offset - d), v.begin() + (offset + d + 1));
  }
  if (found < 0) return false;
  std::vector<std::uint8_t> rev;
  std::int64_t x = n, y = m;
  for (std::int64_t d = found; d > 0; --d) {
    const auto& prev = trace[d - 1];  // indices k + (d - 1)
    auto at = [&](std::int64_t k) { return prev[k + d - 1]; };
    const std::int64_t k = x - y;
    const bool down = k == -d || (k != d && at(k - 1) < at(k + 1));
    const std::int64_t pk = down ? k + 1 : k - 1;
    const std::int64_t px = at(pk), py = px - pk;
    while (x > (down ? px : px + 1) && y > (down ? py + 1 : py)) {
      rev.push_back(0);
      --x, --y;
    }
    rev.push_back(down ? 2 : 1);
    x = px, y = py;
  }
  while (x > 0 && y > 0) {
    rev.push_back(0);
    --x, --y;
  }
  ops.assign(rev.rbegin(), rev.rend());
  return true;
}

std::vector<LoopDiffLine> diff_loops(const LoopSummary& left, const LoopSummary& right,
                                     const NameTable& names, const LoopDiffOptions& options) {
  Differ differ(left, right, names, options);
  differ.diff(left.top(), right.top());
  return differ.take();
}

std::string describe_loop_diff(const std::vector<LoopDiffLine>& lines) {
  if (lines.empty()) return "(loop summaries are equal)\n";
  std::string out;
  auto write = [&](char side, std::uint32_t depth, std::string_view text) {
    out += side;
    out += ' ';
    append_indent(out, depth);
    out += text;
    out += '\n';
  };
  for (std::size_t i = 0; i < lines.size();) {
    // A run of the same line, each one level deeper (the frames of a deep
    // recursion, "f {") or shallower (their "}"): the first, a count, the
    // last, so the text stays short however deep the difference is.
    const LoopDiffLine& l = lines[i];
    std::size_t j = i;
    for (const int step : {1, -1}) {
      while (j + 1 < lines.size() && lines[j + 1].side == l.side && lines[j + 1].text == l.text &&
             static_cast<std::int64_t>(lines[j + 1].depth) ==
                 static_cast<std::int64_t>(lines[j].depth) + step) {
        ++j;
      }
      if (j != i) break;
    }
    if (j - i + 1 < kFoldedRun) {
      write(l.side, l.depth, l.text);
      ++i;
      continue;
    }
    write(l.side, l.depth, l.text);
    write(l.side, std::min(l.depth, lines[j].depth) + 1,
          fmt::format("... {} more levels of \"{}\"", j - i - 1, l.text));
    write(lines[j].side, lines[j].depth, lines[j].text);
    i = j + 1;
  }
  return out;
}

}  // namespace parlot::analysis
