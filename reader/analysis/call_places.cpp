#include "call_places.h"

#include <fmt/format.h>

#include <unordered_map>

namespace parlot::analysis {
namespace {

using Item = LoopSummary::Item;

// Events each call and loop body of a summary stands for, memoised.
class EventCounts {
 public:
  explicit EventCounts(const LoopSummary& s)
      : s_(s), calls_(s.calls().size(), kUnknown), bodies_(s.bodies().size(), kUnknown) {}

  std::uint64_t of(const Item& item) {
    std::uint64_t& memo = item.loop ? bodies_[item.id] : calls_[item.id];
    if (memo == kUnknown) {
      s_.post_order(
          item, [&](const Item& i) { return (i.loop ? bodies_[i.id] : calls_[i.id]) != kUnknown; },
          [&](const Item& i) {
            std::uint64_t sum = 0;
            for (const Item& c : s_.items_of(i)) sum += known(c);
            if (i.loop) {
              bodies_[i.id] = sum;
            } else {
              calls_[i.id] = sum + (s_.calls()[i.id].open ? 1 : 2);
            }
          });
    }
    return known(item);
  }

 private:
  static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};
  // A loop item's events: its count times its body's.
  std::uint64_t known(const Item& i) const {
    return i.loop ? bodies_[i.id] * i.count : calls_[i.id];
  }
  const LoopSummary& s_;
  std::vector<std::uint64_t> calls_;   // [call id]: the call's events
  std::vector<std::uint64_t> bodies_;  // [body id]: one iteration's events
};

struct Level {
  const std::vector<Item>* items;
  std::size_t next = 0;
  bool loop = false;
  std::uint32_t id = 0;         // call id (call level) or body id (loop level)
  std::uint64_t iteration = 1;  // loop level: 1-based
  std::uint64_t count = 1;      // loop level: repetitions
  std::uint64_t body_events = 0;
  bool top = false;
};

// The function an item starts with: a call's, or its loop body's first.
FunctionKey first_function(const LoopSummary& s, Item item) {
  while (item.loop) {
    const auto& body = s.bodies()[item.id];
    if (body.empty()) return 0;
    item = body.front();
  }
  return s.calls()[item.id].function;
}

// Whether a loop body's items hold a call of `function` (at its level).
bool body_calls(const LoopSummary& s, const Item& loop, FunctionKey function) {
  for (const Item& i : s.bodies()[loop.id]) {
    if (!i.loop && s.calls()[i.id].function == function) return true;
  }
  return false;
}

// Repetitions of `function` just before position `at` of `items`: calls of
// it and loops starting with it, back to the first other item; and, within
// the `max_gap` items before those, a loop whose body calls it (the rest of
// its pattern's iteration comes between). They count the iterations before
// a loop's pattern broke: in "3 x [ step ] step'" the odd step is the 4th,
// in "5 x [ exchange relax norm ] relax norm'" the odd norm the 6th.
std::uint64_t repetitions_before(const LoopSummary& s, const std::vector<Item>& items,
                                 std::size_t at, FunctionKey function) {
  constexpr std::size_t kMaxGap = 8;
  std::uint64_t n = 0;
  while (at > 0 && first_function(s, items[at - 1]) == function) {
    --at;
    n += items[at].loop ? items[at].count : 1;
  }
  for (std::size_t gap = 0; at > 0 && gap <= kMaxGap; ++gap) {
    const Item& i = items[--at];
    if (i.loop && body_calls(s, i, function)) return n + i.count;
    if (!i.loop && s.calls()[i.id].function == function) break;
  }
  return n;
}

// Sets the iterations of the loops around the call being entered (the
// last item taken from stack.back()), innermost first: walking up from the
// call, each frame that is an iteration of a loop, or that repeats the
// frame just before it, is one.
void place_iteration(const LoopSummary& s, const std::vector<Level>& stack, CallPlace& p) {
  // Level j's own item sits in level j - 1 at next - 1; the call's in the
  // last level.
  bool in_loop_item = false;  // level j's item is a loop already counted
  for (std::size_t j = stack.size(); j-- > 0;) {
    const Level& holder = stack[j];
    const Item item = (*holder.items)[holder.next - 1];
    LoopIteration it;
    if (holder.loop) {
      // An iteration of the loop `holder`, itself an item of level j - 1.
      const Level& outer = stack[j - 1];
      const Item loop_item = (*outer.items)[outer.next - 1];
      it.iteration =
          repetitions_before(s, *outer.items, outer.next - 1, first_function(s, loop_item)) +
          holder.iteration;
      it.iterations = it.iteration - holder.iteration + holder.count;
    } else {
      if (in_loop_item) {
        in_loop_item = false;
        continue;
      }
      const std::uint64_t before =
          repetitions_before(s, *holder.items, holder.next - 1, first_function(s, item));
      if (before == 0) continue;
      it.iteration = before + 1;
      it.iterations = before + 1;
    }
    in_loop_item = holder.loop;
    // The nearest call at or below the level holding the loop owns it.
    for (std::size_t k = holder.loop ? j : j + 1; k-- > 0;) {
      if (!stack[k].loop && !stack[k].top) {
        it.owner = s.calls()[stack[k].id].function;
        break;
      }
    }
    p.loops.push_back(it);
  }
  if (!p.loops.empty()) {
    p.iteration = p.loops.front().iteration;
    p.iterations = p.loops.front().iterations;
    p.loop_owner = p.loops.front().owner;
  }
}

}  // namespace

std::vector<CallPlace> call_places(const LoopSummary& s, std::span<const std::uint64_t> entries) {
  std::vector<CallPlace> out(entries.size());
  EventCounts counts(s);
  std::vector<Level> stack{{&s.top(), 0, false, 0, 1, 1, 0, true}};
  std::uint64_t index = 0;  // index of the next event
  std::size_t w = 0;
  while (!stack.empty() && w < entries.size()) {
    while (w < entries.size() && entries[w] < index) ++w;  // not an entry: left empty
    if (w == entries.size()) break;
    Level& level = stack.back();
    if (level.next == level.items->size()) {
      if (level.loop && level.iteration < level.count) {
        const std::uint64_t left = level.count - level.iteration;
        if (entries[w] >= index + left * level.body_events) {
          index += left * level.body_events;
          stack.pop_back();
          continue;
        }
        const std::uint64_t skip = (entries[w] - index) / level.body_events;
        index += skip * level.body_events;
        level.iteration += skip + 1;
        level.next = 0;
        continue;
      }
      if (!level.loop && !level.top && !s.calls()[level.id].open) ++index;  // the exit
      stack.pop_back();
      continue;
    }
    const Item item = (*level.items)[level.next++];
    const std::uint64_t n = counts.of(item);
    if (entries[w] >= index + n) {
      index += n;
      continue;
    }
    if (item.loop) {
      const std::uint64_t body = n / item.count;
      const std::uint64_t skip = body == 0 ? 0 : (entries[w] - index) / body;
      index += skip * body;
      stack.push_back({&s.bodies()[item.id], 0, true, item.id, skip + 1, item.count, body, false});
      continue;
    }
    const LoopSummary::Call& call = s.calls()[item.id];
    if (entries[w] == index) {
      CallPlace& p = out[w];
      for (const Level& l : stack) {
        if (!l.loop && !l.top) p.path.push_back(s.calls()[l.id].function);
      }
      p.path.push_back(call.function);
      place_iteration(s, stack, p);
      p.open = call.open;
      ++w;
    }
    ++index;  // the entry
    stack.push_back({&call.body, 0, false, item.id, 1, 1, 0, false});
  }
  return out;
}

std::vector<FunctionKey> open_calls_at_end(const LoopSummary& s) {
  std::vector<FunctionKey> open;
  const std::vector<Item>* items = &s.top();
  while (!items->empty()) {
    const Item& last = items->back();
    if (last.loop || !s.calls()[last.id].open) break;
    open.push_back(s.calls()[last.id].function);
    items = &s.calls()[last.id].body;
  }
  return open;
}

std::string iteration_text(const CallPlace& place, const NameTable& names) {
  std::string out;
  for (auto it = place.loops.rbegin(); it != place.loops.rend(); ++it) {
    if (!out.empty()) out += ", ";
    out += it->owner == 0 ? fmt::format("iteration {} of the loop at the top level", it->iteration)
                          : fmt::format("iteration {} of the loop in {}", it->iteration,
                                        names.name(it->owner));
  }
  return out;
}

std::string path_text(const CallPlace& place, const NameTable& names) {
  std::string out;
  for (const FunctionKey f : place.path) {
    if (!out.empty()) out += " > ";
    out += names.name(f);
  }
  return out;
}

}  // namespace parlot::analysis
