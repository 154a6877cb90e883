#include "thread_set.h"

#include <fmt/format.h>

namespace parlot::analysis {

void ThreadSet::merge(const ThreadSet& o) {
  for (const auto& [rank, threads] : o.by_rank_)
    by_rank_[rank].insert(threads.begin(), threads.end());
}

std::size_t ThreadSet::size() const {
  std::size_t n = 0;
  for (const auto& [rank, threads] : by_rank_) n += threads.size();
  return n;
}

ThreadId ThreadSet::first() const {
  return {by_rank_.begin()->first, *by_rank_.begin()->second.begin()};
}

bool ThreadSet::contains(ThreadId t) const {
  const auto it = by_rank_.find(t.rank);
  return it != by_rank_.end() && it->second.contains(t.thread);
}

std::string compact_ranges(const std::set<std::uint64_t>& numbers) {
  std::string out;
  for (auto it = numbers.begin(); it != numbers.end();) {
    const std::uint64_t first = *it;
    std::uint64_t last = first;
    for (++it; it != numbers.end() && *it == last + 1; ++it) last = *it;
    if (!out.empty()) out += ',';
    out += first == last ? fmt::format("{}", first) : fmt::format("{}-{}", first, last);
  }
  return out;
}

std::string ThreadSet::to_string(bool ranked) const {
  // Group ranks by their thread set, in order of each group's first rank.
  std::map<std::set<std::uint64_t>, std::set<std::uint64_t>> ranks_by_threads;
  for (const auto& [rank, threads] : by_rank_) ranks_by_threads[threads].insert(rank);
  std::map<std::uint64_t, std::string> groups;
  for (const auto& [threads, ranks] : ranks_by_threads) {
    std::string g = fmt::format(
        "{} {}",
        ranks.size() == 1 ? (ranked ? "rank" : "process") : (ranked ? "ranks" : "processes"),
        compact_ranges(ranks));
    if (!(threads.size() == 1 && *threads.begin() == 0)) {
      g += fmt::format(" {} {}", threads.size() == 1 ? "thread" : "threads",
                       compact_ranges(threads));
    }
    groups.emplace(*ranks.begin(), std::move(g));
  }
  std::string out;
  for (const auto& [first, g] : groups) out += (out.empty() ? "" : "; ") + g;
  return out;
}

}  // namespace parlot::analysis
