#include "analysis/reduction.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

namespace parlot::analysis {

namespace {

/// FNV-1a over the segment's events (function IDs, 0 for exits).
std::uint64_t signature(const TimedThread& thread, const Segment& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t j = s.first; j < s.end; ++j) {
    h = (h ^ thread.events[j].id) * 0x100000001b3ull;
    h = (h ^ (thread.events[j].enter() ? 1u : 2u)) * 0x100000001b3ull;
  }
  return h ^ (s.end - s.first);
}

bool same_events(const TimedThread& thread, const Segment& a, const Segment& b) {
  if (a.end - a.first != b.end - b.first) return false;
  for (std::size_t i = 0; i < a.end - a.first; ++i) {
    const TimedEvent& x = thread.events[a.first + i];
    const TimedEvent& y = thread.events[b.first + i];
    if (x.enter() != y.enter() || x.id != y.id) return false;
  }
  return true;
}

}  // namespace

std::vector<double> measurements(const TimedThread& thread, const Segment& segment) {
  std::vector<double> v;
  v.reserve(segment.end - segment.first + 1);
  for (std::size_t j = segment.first; j < segment.end; ++j) {
    const std::uint64_t t = thread.events[j].time;
    v.push_back(t > segment.begin ? static_cast<double>(t - segment.begin) : 0.0);
  }
  v.push_back(static_cast<double>(segment.finish - segment.begin));
  return v;
}

bool whole_calls(const TimedThread& thread, const Segment& segment) {
  std::int64_t depth = 0;
  for (std::size_t j = segment.first; j < segment.end; ++j) {
    depth += thread.events[j].enter() ? 1 : -1;
    if (depth < 0) return false;
  }
  return depth == 0;
}

ThreadReduction reduce_segments(const TimedThread& thread, const std::vector<Segment>& segments,
                                Metric metric, double threshold) {
  ThreadReduction r;
  r.representative.resize(segments.size());
  r.written.resize(segments.size());
  // Representatives by signature, in the order they were kept.
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> stored;
  std::vector<std::vector<double>> vectors(segments.size());
  std::vector<std::size_t> members(segments.size(), 0);
  const std::size_t k = static_cast<std::size_t>(std::max(1.0, std::floor(threshold)));
  for (std::size_t s = 0; s < segments.size(); ++s) {
    vectors[s] = measurements(thread, segments[s]);
    std::optional<std::size_t> match;
    const bool droppable = whole_calls(thread, segments[s]);
    auto& list = stored[signature(thread, segments[s])];
    std::vector<std::size_t> same;
    for (const std::size_t c : list) {
      if (same_events(thread, segments[c], segments[s])) same.push_back(c);
    }
    if (droppable && !same.empty()) {
      if (metric == Metric::kIterAvg) {
        match = same.front();
      } else if (metric == Metric::kIterK) {
        if (same.size() >= k) match = same.back();
      } else {
        for (const std::size_t c : same) {
          if (distance(metric, vectors[s], vectors[c], threshold).matches()) {
            match = c;
            break;
          }
        }
      }
    }
    if (same.empty()) ++r.signatures;
    if (match) {
      r.representative[s] = *match;
      ++members[*match];
      if (metric == Metric::kIterAvg) {
        auto& sum = r.written[*match];
        for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += vectors[s][i];
      }
    } else {
      r.representative[s] = s;
      members[s] = 1;
      r.written[s] = vectors[s];
      list.push_back(s);
      ++r.kept;
    }
  }
  if (metric == Metric::kIterAvg) {
    for (std::size_t s = 0; s < segments.size(); ++s) {
      for (double& x : r.written[s]) x /= static_cast<double>(std::max<std::size_t>(1, members[s]));
      // Times within a segment never decrease.
      for (std::size_t i = 1; i < r.written[s].size(); ++i) {
        r.written[s][i] = std::max(r.written[s][i], r.written[s][i - 1]);
      }
    }
  }
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const auto& rep = r.written[r.representative[s]];
    for (std::size_t i = 0; i < vectors[s].size() && i < rep.size(); ++i) {
      r.errors.push_back(std::fabs(rep[i] - vectors[s][i]));
    }
  }
  return r;
}

double percentile(std::vector<double> v, double fraction) {
  if (v.empty()) return 0;
  const double rank = std::ceil(fraction * static_cast<double>(v.size()));
  const std::size_t i = rank < 1 ? 0 : std::min(v.size() - 1, static_cast<std::size_t>(rank) - 1);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

}  // namespace parlot::analysis
