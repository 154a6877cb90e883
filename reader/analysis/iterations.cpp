#include "analysis/iterations.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/loops.h"
#include "analysis/summary_events.h"

namespace parlot::analysis {

namespace {

using Item = LoopSummary::Item;

/// The loop of `summary` covering most events (outermost on ties): its
/// first call's function and the call depth of its body's calls.
std::optional<std::pair<FunctionKey, std::uint32_t>> main_loop(const LoopSummary& summary) {
  const auto& calls = summary.calls();
  const auto& bodies = summary.bodies();
  // Events of each call and of one pass of each body (as event_count()).
  const SummaryEvents events = summary_events(summary);

  // Every distinct call and loop once, with its depth, outermost first.
  std::optional<Item> best;
  std::uint64_t best_events = 0;
  std::uint32_t best_depth = 0;
  std::vector<bool> call_seen(calls.size(), false), body_seen(bodies.size(), false);
  std::vector<std::pair<Item, std::uint32_t>> todo;
  for (const Item& i : summary.top()) todo.emplace_back(i, 0);
  for (std::size_t next = 0; next < todo.size(); ++next) {
    const auto [item, depth] = todo[next];
    auto& seen = item.loop ? body_seen : call_seen;
    if (seen[item.id]) continue;
    seen[item.id] = true;
    if (item.loop) {
      const std::uint64_t covered = events.of(item);
      if (covered > best_events || (covered == best_events && depth < best_depth && best)) {
        best = item, best_events = covered, best_depth = depth;
      }
    }
    const std::uint32_t inner = item.loop ? depth : depth + 1;
    for (const Item& i : summary.items_of(item)) todo.emplace_back(i, inner);
  }
  if (!best) return std::nullopt;
  // Its first call: descend through loops at its front.
  Item head = *best;
  while (head.loop) {
    const auto& body = bodies[head.id];
    if (body.empty()) return std::nullopt;
    head = body.front();
  }
  return std::make_pair(calls[head.id].function, best_depth);
}

/// Segments of `thread` that start at entries of the function `is_head`
/// accepts at depth `depth`, within the caller activation that makes most.
Segmentation loop_segments(const TimedThread& thread, std::uint32_t depth,
                           const std::vector<bool>& is_head, std::string how) {
  const auto& events = thread.events;
  // Entries of the head, grouped by the entry index of their caller
  // (SIZE_MAX at depth 0).
  std::map<std::size_t, std::vector<std::size_t>> by_caller;
  std::vector<std::size_t> open;  // entry index of each open frame
  for (std::size_t j = 0; j < events.size(); ++j) {
    const TimedEvent& e = events[j];
    if (e.enter()) {
      if (open.size() == depth && e.key < is_head.size() && is_head[e.key]) {
        by_caller[depth == 0 ? SIZE_MAX : open[depth - 1]].push_back(j);
      }
      open.push_back(j);
    } else if (!open.empty()) {
      open.pop_back();
    }
  }
  const std::vector<std::size_t>* starts = nullptr;
  for (const auto& [caller, list] : by_caller) {
    if (!starts || list.size() > starts->size()) starts = &list;
  }
  Segmentation out;
  if (!starts || starts->size() < 2) return out;
  auto time_at = [&](std::size_t j) {
    return j < events.size() ? events[j].time : thread.end_time;
  };
  for (std::size_t i = 0; i + 1 < starts->size(); ++i) {
    const std::size_t a = (*starts)[i], b = (*starts)[i + 1];
    out.segments.push_back({a, b, time_at(a), time_at(b)});
  }
  // The last one: the calls at `depth` of the one before, as long as they
  // are the same functions (not what follows the loop), or to the caller's
  // exit.
  const Segment& before = out.segments.back();
  std::vector<std::uint32_t> expected;
  {
    std::uint32_t d = depth;
    for (std::size_t j = before.first; j < before.end; ++j) {
      if (events[j].enter()) {
        if (d == depth) expected.push_back(events[j].key);
        ++d;
      } else {
        --d;
      }
    }
  }
  std::size_t j = starts->back();
  std::uint32_t d = depth;
  for (std::size_t seen = 0; j < events.size(); ++j) {
    if (events[j].enter()) {
      if (d == depth) {
        if (seen == expected.size() || events[j].key != expected[seen]) break;
        ++seen;
      }
      ++d;
    } else {
      if (d == depth) break;  // the caller's exit
      --d;
    }
  }
  out.segments.push_back({starts->back(), j, time_at(starts->back()), time_at(j)});
  out.how = std::move(how);
  return out;
}

}  // namespace

std::uint32_t NameIndex::key(std::string_view name) {
  const auto [it, inserted] =
      keys_.try_emplace(std::string(name), static_cast<std::uint32_t>(names_.size()));
  if (inserted) {
    names_.emplace_back(name);
    categories_.push_back(classify_function(name));
  }
  return it->second;
}

std::optional<std::uint32_t> NameIndex::find(std::string_view name) const {
  const auto it = keys_.find(std::string(name));
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

Segmentation find_iterations(const TimedThread& thread, const NameIndex& names,
                             const IterationChoice& choice, std::size_t max_body) {
  const auto& events = thread.events;
  std::vector<bool> is_head(names.size(), false);
  if (choice.loop) {
    // The shallowest depth at which the function is called.
    std::optional<std::uint32_t> depth;
    std::uint32_t d = 0;
    for (const TimedEvent& e : events) {
      if (e.enter()) {
        if (e.key == *choice.loop && (!depth || d < *depth)) depth = d;
        ++d;
      } else if (d > 0) {
        --d;
      }
    }
    if (!depth) return {};
    is_head[*choice.loop] = true;
    return loop_segments(thread, *depth, is_head, "calls of " + names.name(*choice.loop));
  }
  if (thread.marks.size() >= 2) {
    Segmentation out;
    for (std::size_t i = 0; i + 1 < thread.marks.size(); ++i) {
      const TimedMark& a = thread.marks[i];
      const TimedMark& b = thread.marks[i + 1];
      const std::size_t first = std::min<std::uint64_t>(a.index, events.size());
      const std::size_t end = std::min<std::uint64_t>(b.index, events.size());
      out.segments.push_back({first, end, a.time, std::max(a.time, b.time)});
    }
    out.how = "marks";
    return out;
  }
  LoopBuilder builder(max_body);
  std::vector<FunctionKey> hashes(names.size());
  for (std::size_t k = 0; k < names.size(); ++k) hashes[k] = function_key(names.name(k));
  std::uint32_t depth = 0;
  std::vector<FunctionKey> stack;
  for (const TimedEvent& e : events) {
    if (e.enter()) {
      builder.push({true, hashes[e.key], depth++});
      stack.push_back(hashes[e.key]);
    } else if (depth > 0) {
      builder.push({false, stack.back(), --depth});
      stack.pop_back();
    }
  }
  const auto loop = main_loop(builder.finish());
  if (!loop) return {};
  std::string head;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (hashes[k] == loop->first) {
      is_head[k] = true;
      head = names.name(k);
    }
  }
  return loop_segments(thread, loop->second, is_head, "loop of " + head);
}

std::uint64_t IterationTime::work() const {
  const std::uint64_t wait = category[static_cast<std::size_t>(TimeCategory::kMpiWait)];
  return duration > wait ? duration - wait : 0;
}

std::uint64_t IterationTime::function_time(std::uint32_t key) const {
  const auto it = std::lower_bound(functions.begin(), functions.end(), key,
                                   [](const auto& f, std::uint32_t k) { return f.first < k; });
  return it != functions.end() && it->first == key ? it->second : 0;
}

std::vector<IterationTime> time_segments(const TimedThread& thread, const NameIndex& names,
                                         const std::vector<Segment>& segments) {
  std::vector<IterationTime> out(segments.size());
  std::vector<std::unordered_map<std::uint32_t, std::uint64_t>> by_function(segments.size());
  const auto& events = thread.events;
  std::vector<std::uint32_t> stack;
  std::size_t s = 0;
  for (std::size_t j = 0; j < events.size(); ++j) {
    const TimedEvent& e = events[j];
    if (e.enter()) {
      stack.push_back(e.key);
    } else if (!stack.empty()) {
      stack.pop_back();
    }
    while (s < segments.size() && j >= segments[s].end) ++s;
    if (s == segments.size()) break;
    if (j < segments[s].first || stack.empty()) continue;
    const std::uint64_t next = j + 1 < events.size() ? events[j + 1].time : thread.end_time;
    const std::uint64_t stretch = next > e.time ? next - e.time : 0;
    out[s].category[static_cast<std::size_t>(names.category(stack.back()))] += stretch;
    by_function[s][stack.back()] += stretch;
  }
  for (std::size_t k = 0; k < segments.size(); ++k) {
    out[k].present = true;
    out[k].begin = segments[k].begin;
    out[k].duration = segments[k].finish - segments[k].begin;
    out[k].functions.assign(by_function[k].begin(), by_function[k].end());
    std::sort(out[k].functions.begin(), out[k].functions.end());
  }
  return out;
}

std::size_t IterationTable::iterations() const {
  std::size_t n = 0;
  for (const auto& t : times) n = std::max(n, t.size());
  return n;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  return (upper + *std::max_element(v.begin(), v.begin() + mid)) / 2;
}

namespace {

/// Median over unit `u`'s iterations of `value(time)`.
template <class Value>
double unit_median(const IterationTable& t, std::size_t u, Value value) {
  std::vector<double> v;
  for (const IterationTime& it : t.times[u]) {
    if (it.present) v.push_back(static_cast<double>(value(it)));
  }
  return median(std::move(v));
}

std::uint64_t category_time(const IterationTime& it, TimeCategory c) {
  return it.category[static_cast<std::size_t>(c)];
}

/// The function of `cat_ok` categories whose time in unit `u`'s iteration
/// `k` exceeds its median over u's iterations most, and that excess.
template <class CategoryOk>
std::pair<std::optional<std::uint32_t>, double> grown_function(const IterationTable& t,
                                                               const NameIndex& names,
                                                               std::size_t u, std::size_t k,
                                                               CategoryOk cat_ok) {
  std::optional<std::uint32_t> best;
  double best_excess = 0;
  for (const auto& [key, time] : t.times[u][k].functions) {
    if (!cat_ok(names.category(key))) continue;
    const double excess =
        static_cast<double>(time) -
        unit_median(t, u, [key = key](const IterationTime& it) { return it.function_time(key); });
    if (!best || excess > best_excess) best = key, best_excess = excess;
  }
  return {best, best_excess};
}

}  // namespace

std::vector<Standout> find_standouts(const IterationTable& table, const NameIndex& names,
                                     std::size_t top) {
  const std::size_t n = table.iterations();
  if (n < 3) return {};
  // Each iteration's time: its slowest unit's duration.
  std::vector<double> times(n, 0.0);
  std::vector<std::uint64_t> raw(n, 0);
  for (const auto& unit : table.times) {
    for (std::size_t k = 0; k < unit.size(); ++k) {
      if (unit[k].present) raw[k] = std::max(raw[k], unit[k].duration);
    }
  }
  for (std::size_t k = 0; k < n; ++k) times[k] = static_cast<double>(raw[k]);
  const double mid = median(times);
  std::vector<double> deviations(n);
  for (std::size_t k = 0; k < n; ++k) deviations[k] = std::fabs(times[k] - mid);
  const double mad = 1.4826 * median(deviations);
  std::vector<Standout> out;
  for (std::size_t k = 0; k < n; ++k) {
    const double excess = times[k] - mid;
    if (excess <= 3 * mad || excess <= 0.05 * mid) continue;
    Standout s;
    s.iteration = k;
    s.time = raw[k];
    s.median = mid;
    s.excess = excess;
    // The unit whose own work grew most.
    bool any = false;
    for (std::size_t u = 0; u < table.times.size(); ++u) {
      if (k >= table.times[u].size() || !table.times[u][k].present) continue;
      const double grew = static_cast<double>(table.times[u][k].work()) -
                          unit_median(table, u, [](const IterationTime& it) { return it.work(); });
      if (!any || grew > s.work_excess) s.unit = u, s.work_excess = grew, any = true;
    }
    if (!any) continue;
    const IterationTime& culprit = table.times[s.unit][k];
    double best = 0;
    bool first = true;
    for (const TimeCategory c :
         {TimeCategory::kComputation, TimeCategory::kMpiCommunication, TimeCategory::kIo}) {
      const double grew =
          static_cast<double>(category_time(culprit, c)) -
          unit_median(table, s.unit, [c](const IterationTime& it) { return category_time(it, c); });
      if (first || grew > best) s.category = c, best = grew, first = false;
    }
    std::tie(s.function, s.function_excess) =
        grown_function(table, names, s.unit, k, [&](TimeCategory c) { return c == s.category; });
    // The others' extra waiting.
    std::map<std::uint32_t, double> waited_in;
    std::size_t others = 0;
    double waited = 0;
    for (std::size_t u = 0; u < table.times.size(); ++u) {
      if (u == s.unit || k >= table.times[u].size() || !table.times[u][k].present) continue;
      ++others;
      const double grew =
          static_cast<double>(category_time(table.times[u][k], TimeCategory::kMpiWait)) -
          unit_median(table, u, [](const IterationTime& it) {
            return category_time(it, TimeCategory::kMpiWait);
          });
      waited += grew;
      if (grew <= 0) continue;
      s.waiters.push_back(u);
      const auto [f, e] = grown_function(
          table, names, u, k, [](TimeCategory c) { return c == TimeCategory::kMpiWait; });
      if (f) waited_in[*f] += e;
    }
    s.wait_excess = others > 0 ? waited / static_cast<double>(others) : 0;
    for (const auto& [key, e] : waited_in) {
      if (!s.wait_function || e > waited_in[*s.wait_function]) s.wait_function = key;
    }
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Standout& a, const Standout& b) { return a.excess > b.excess; });
  if (top > 0 && out.size() > top) out.resize(top);
  return out;
}

std::vector<IterationSpread> spread(const IterationTable& table) {
  std::vector<IterationSpread> out(table.iterations());
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::vector<double> d;
    IterationSpread& s = out[k];
    for (std::size_t u = 0; u < table.times.size(); ++u) {
      if (k >= table.times[u].size() || !table.times[u][k].present) continue;
      const std::uint64_t v = table.times[u][k].duration;
      if (d.empty() || v < s.min) s.min = v;
      if (d.empty() || v > s.max) s.max = v, s.slowest = u;
      d.push_back(static_cast<double>(v));
    }
    s.units = d.size();
    s.median = median(std::move(d));
  }
  return out;
}

}  // namespace parlot::analysis
