#include "parting.h"

#include "hash_mix.h"

#include <algorithm>

namespace parlot::analysis {
namespace {

using Item = LoopSummary::Item;

/// One thread's position in its summary: a stack of the lists being walked
/// (the top level, the bodies of the calls entered, the iterations of the
/// loops entered). Loops are transparent: an iteration's list ends into the
/// next iteration or the item after the loop.
class Cursor {
 public:
  struct Level {
    const std::vector<Item>* list;
    std::size_t index = 0;          ///< the current item (a call entered stays current)
    std::uint64_t consumed = 0;     ///< iterations taken of the loop at `index`
    bool loop_body = false;         ///< an iteration of the loop at the parent's index
    FunctionKey function = 0;       ///< the call whose body this is (0: top level, loop body)
    bool open = false;              ///< that call is open at the end of the trace
    std::uint64_t start = 0;        ///< common events before the call's entry
    std::uint64_t start_index = 0;  ///< index() at the call's entry
  };
  struct Token {
    enum class Kind { kItem, kEndCall, kEndOpen, kEndStream } kind;
    const Item* item = nullptr;
    std::uint64_t remaining = 0;  ///< iterations left of a loop item
  };

  explicit Cursor(FilteredSummary& f) : f_(f) { levels_.push_back({&f.summary().top()}); }

  /// The next token, after leaving finished loop iterations and skipping role code.
  Token peek() {
    for (;;) {
      Level& l = levels_.back();
      if (l.index < l.list->size()) {
        const Item& i = (*l.list)[l.index];
        if (f_.skipped(i)) {
          index_ += i.loop ? (i.count - l.consumed) * f_.all_body_events(i) : f_.all_events(i);
          ++l.index;
          l.consumed = 0;
          continue;
        }
        return {Token::Kind::kItem, &i, i.loop ? i.count - l.consumed : 1};
      }
      if (l.loop_body) {
        levels_.pop_back();
        Level& p = levels_.back();
        if (p.consumed == (*p.list)[p.index].count) ++p.index, p.consumed = 0;
        continue;
      }
      if (levels_.size() == 1) return {Token::Kind::kEndStream};
      return {l.open ? Token::Kind::kEndOpen : Token::Kind::kEndCall};
    }
  }
  /// Passes the current call, or the rest of the current loop.
  void skip_item() {
    const Level& l = levels_.back();
    const Item& i = (*l.list)[l.index];
    index_ += i.loop ? (i.count - l.consumed) * f_.all_body_events(i) : f_.all_events(i);
    next_item();
  }
  /// Passes `k` iterations of the current loop.
  void skip_iterations(std::uint64_t k) {
    Level& l = levels_.back();
    index_ += k * f_.all_body_events((*l.list)[l.index]);
    l.consumed += k;
    if (l.consumed == (*l.list)[l.index].count) ++l.index, l.consumed = 0;
  }
  /// Enters the next iteration of the current loop.
  void enter_iteration() {
    Level& l = levels_.back();
    const Item& i = (*l.list)[l.index];
    ++l.consumed;
    levels_.push_back({&f_.summary().bodies()[i.id], 0, 0, true, 0, false});
  }
  /// Enters the current call, after `start` common events.
  void enter_call(std::uint64_t start) {
    const Item& i = (*levels_.back().list)[levels_.back().index];
    const LoopSummary::Call& c = f_.summary().calls()[i.id];
    levels_.push_back({&c.body, 0, 0, false, c.function, c.open, start, index_});
    ++index_;  // its entry
  }
  /// The events of the call whose body is levels()[k] (k > 0), role code left out.
  std::uint64_t call_events(std::size_t k) {
    const Level& p = levels_[k - 1];
    return f_.events((*p.list)[p.index]);
  }
  /// Leaves the current (ended) call.
  void exit_call() {
    levels_.pop_back();
    ++index_;  // its exit
    next_item();
  }
  /// Index in levels() of the innermost call's body (0: the top level).
  std::size_t innermost_call() const {
    std::size_t k = levels_.size() - 1;
    while (k > 0 && levels_[k].loop_body) --k;
    return k;
  }
  /// Leaves the call whose body is levels()[k] (and the loops inside it),
  /// as if it had returned.
  void leave_call(std::size_t k) {
    const Level& p = levels_[k - 1];
    index_ = levels_[k].start_index + f_.all_events((*p.list)[p.index]);
    levels_.resize(k);
    next_item();
  }
  const std::vector<Level>& levels() const { return levels_; }
  const LoopSummary& summary() const { return f_.summary(); }
  /// Events of the whole stream (role code included) before the current position.
  std::uint64_t index() const { return index_; }

 private:
  // Moves past the current item without counting its events.
  void next_item() {
    ++levels_.back().index;
    levels_.back().consumed = 0;
  }
  FilteredSummary& f_;
  std::vector<Level> levels_;
  std::uint64_t index_ = 0;
};

/// Two items of one summary that stand for the same step of a loop body:
/// calls of one function, or the same loop.
bool same_step(const LoopSummary& s, const Item& a, const Item& b) {
  if (a.loop || b.loop) return a == b;
  return s.calls()[a.id].function == s.calls()[b.id].function;
}

/// The loop a list level is inside without a loop frame: the items from the
/// nearest loop before the current one up to the current item are a proper
/// prefix of that loop's body (the thread began one more iteration than the
/// loop folded). Returns the frame, iteration count + 1, or none (loop false).
PathFrame partial_iteration(const LoopSummary& s, const Cursor::Level& l, bool has_current) {
  const std::size_t end = std::min(l.index + (has_current ? 1 : 0), l.list->size());
  const std::size_t stop = l.index > 64 ? l.index - 64 : 0;
  for (std::size_t j = l.index; j-- > stop;) {
    const Item& loop = (*l.list)[j];
    if (!loop.loop) continue;
    const auto& body = s.bodies()[loop.id];
    const std::size_t after = end - j - 1;  // items since the loop, the current one included
    if (after == 0 || after > body.size()) return {};
    for (std::size_t t = 0; t < after; ++t) {
      if (!same_step(s, (*l.list)[j + 1 + t], body[t])) return {};
    }
    return {true, 0, loop.count + 1, 0};
  }
  return {};
}

/// Per call of the path (the top level first): the loop frames of one
/// side in that call, real (loop iterations entered) then partial.
struct Segments {
  std::vector<FunctionKey> calls;  // [0] = 0: the top level
  std::vector<std::vector<PathFrame>> real, partial;
};

Segments segments(const Cursor& c, bool has_current) {
  Segments out;
  const auto& levels = c.levels();
  for (std::size_t k = 0; k < levels.size(); ++k) {
    const Cursor::Level& l = levels[k];
    if (!l.loop_body) {
      out.calls.push_back(l.function);
      out.real.emplace_back();
      out.partial.emplace_back();
    } else {
      const Cursor::Level& p = levels[k - 1];
      out.real.back().push_back({true, 0, p.consumed, (*p.list)[p.index].count});
    }
    // The innermost level of a call (the next is a call's body, or none).
    const bool innermost = k + 1 == levels.size() || !levels[k + 1].loop_body;
    if (innermost) {
      const PathFrame f = partial_iteration(c.summary(), l, k + 1 < levels.size() || has_current);
      if (f.loop) out.partial.back() = {f};
    }
  }
  return out;
}

std::vector<PathFrame> path_of(const Cursor& mine, const Cursor& theirs, bool mine_current,
                               bool theirs_current) {
  const Segments a = segments(mine, mine_current), b = segments(theirs, theirs_current);
  std::vector<PathFrame> path;
  const std::size_t n = std::min(a.calls.size(), b.calls.size());
  for (std::size_t s = 0; s < n; ++s) {
    if (s > 0) path.push_back({false, a.calls[s], 0, 0});
    // One side's frames: the side inside a loop iteration, else the side
    // inside an iteration the loop did not fold.
    const Segments& side = !a.real[s].empty()      ? a
                           : !b.real[s].empty()    ? b
                           : !a.partial[s].empty() ? a
                                                   : b;
    path.insert(path.end(), side.real[s].begin(), side.real[s].end());
    path.insert(path.end(), side.partial[s].begin(), side.partial[s].end());
  }
  return path;
}

PartingStep step_of(const Cursor& c, const Cursor::Token& t) {
  using K = Cursor::Token::Kind;
  const FunctionKey inner = c.levels().empty() ? 0 : [&] {
    for (auto l = c.levels().rbegin(); l != c.levels().rend(); ++l) {
      if (!l->loop_body) return l->function;
    }
    return FunctionKey{0};
  }();
  switch (t.kind) {
    case K::kItem: {
      // The first call the item stands for (a loop's first call).
      const Item* i = t.item;
      while (i->loop) {
        const auto& body = c.summary().bodies()[i->id];
        if (body.empty()) return {PartingStep::Kind::kEnd, 0};
        i = &body.front();
      }
      return {PartingStep::Kind::kCall, c.summary().calls()[i->id].function};
    }
    case K::kEndCall:
      return {PartingStep::Kind::kReturn, inner};
    case K::kEndOpen:
      return {PartingStep::Kind::kStop, inner};
    case K::kEndStream:
      break;
  }
  return {PartingStep::Kind::kEnd, 0};
}

}  // namespace

std::vector<std::uint64_t> Parting::iterations() const {
  std::vector<std::uint64_t> out;
  for (const PathFrame& f : path) {
    if (f.loop) out.push_back(f.iteration);
  }
  return out;
}

FilteredSummary::FilteredSummary(const LoopSummary& summary, const RoleCode& role)
    : s_(summary),
      role_(role),
      call_(summary.calls().size()),
      body_(summary.bodies().size()),
      call_done_(summary.calls().size(), false),
      body_done_(summary.bodies().size(), false) {}

const FilteredSummary::Info& FilteredSummary::info(const Item& root) {
  auto list = [&](const std::vector<Item>& items) {
    Info r{0x51ed27, 0, 0};
    for (const Item& i : items) {
      if (i.loop) {
        const Info& b = body_[i.id];
        r.all += i.count * b.all;
        if (b.events == 0) continue;
        r.hash = mix(r.hash, mix(mix(2, b.hash), i.count));
        r.events += i.count * b.events;
      } else {
        const Info& c = call_[i.id];
        r.all += c.all;
        if (c.events == 0) continue;  // role code
        r.hash = mix(r.hash, mix(1, c.hash));
        r.events += c.events;
      }
    }
    return r;
  };
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
        const std::uint64_t own = c.open ? 1 : 2;  // its entry (and exit)
        if (role_.contains(c.function)) {
          call_[owner.id] = {0, 0, b.all + own};
        } else {
          call_[owner.id] = {mix(mix(c.function, own), b.hash), b.events + own, b.all + own};
        }
        call_done_[owner.id] = true;
      });
  return root.loop ? body_[root.id] : call_[root.id];
}

bool FilteredSummary::skipped(const Item& i) {
  return info(i).events == 0;
}
std::uint64_t FilteredSummary::hash(const Item& i) {
  return info(i).hash;
}
std::uint64_t FilteredSummary::body_events(const Item& i) {
  return info(i).events;
}
std::uint64_t FilteredSummary::events(const Item& i) {
  return i.loop ? i.count * info(i).events : info(i).events;
}
std::uint64_t FilteredSummary::all_body_events(const Item& i) {
  return info(i).all;
}
std::uint64_t FilteredSummary::all_events(const Item& i) {
  return i.loop ? i.count * info(i).all : info(i).all;
}

Parting part(FilteredSummary& mine, FilteredSummary& theirs, std::uint64_t max_steps) {
  using K = Cursor::Token::Kind;
  Parting p;
  Cursor a(mine), b(theirs);
  for (std::uint64_t steps = 0;; ++steps) {
    if (steps == max_steps) {
      p.unresolved = true;
      return p;
    }
    const Cursor::Token ta = a.peek(), tb = b.peek();
    if (ta.kind == tb.kind && ta.kind != K::kItem) {
      if (ta.kind != K::kEndCall) return p;  // both end there
      a.exit_call();
      b.exit_call();
      ++p.events;
      continue;
    }
    if (ta.kind == K::kItem && tb.kind == K::kItem) {
      const Item &x = *ta.item, &y = *tb.item;
      if (x.loop && y.loop && mine.hash(x) == theirs.hash(y)) {
        const std::uint64_t k = std::min(ta.remaining, tb.remaining);
        p.events += k * mine.body_events(x);
        a.skip_iterations(k);
        b.skip_iterations(k);
        continue;
      }
      if (x.loop) {
        a.enter_iteration();
        continue;
      }
      if (y.loop) {
        b.enter_iteration();
        continue;
      }
      if (mine.hash(x) == theirs.hash(y)) {
        p.events += mine.events(x);
        a.skip_item();
        b.skip_item();
        continue;
      }
      if (mine.summary().calls()[x.id].function == theirs.summary().calls()[y.id].function) {
        a.enter_call(p.events);
        b.enter_call(p.events);
        ++p.events;
        continue;
      }
    }
    Parting here;
    here.identical = false;
    here.events = p.events;
    here.mine_index = a.index();
    here.theirs_index = b.index();
    here.mine = step_of(a, ta);
    here.theirs = step_of(b, tb);
    here.path = path_of(a, b, ta.kind == K::kItem, tb.kind == K::kItem);
    const std::size_t ca = a.innermost_call(), cb = b.innermost_call();
    const Cursor::Level &la = a.levels()[ca], &lb = b.levels()[cb];
    if (ca > 0 && cb > 0 && !la.open && !lb.open) {
      // Inside a call both complete: noted, and both leave it.
      here.within = la.function;
      if (p.within_completed.empty()) p.within_completed.push_back(std::move(here));
      // From here on the events are counted on this side (`mine`).
      p.events = la.start + a.call_events(ca);
      a.leave_call(ca);
      b.leave_call(cb);
      continue;
    }
    here.within_completed = std::move(p.within_completed);
    return here;
  }
}

}  // namespace parlot::analysis
