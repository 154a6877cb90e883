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
  const auto& [fork, thread] = *by_rank_.begin()->second.begin();
  return {by_rank_.begin()->first, thread, fork};
}

bool ThreadSet::contains(ThreadId t) const {
  const auto it = by_rank_.find(t.rank);
  return it != by_rank_.end() && it->second.contains({t.fork, t.thread});
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

namespace {

// The members of one rank after its rank number: "" (thread 0 of the rank's
// first process only), " threads 0-7", " + fork 1", " fork 1 threads 0,2",
// " fork 1 + fork 2".
std::string members_text(const std::set<std::pair<std::uint64_t, std::uint64_t>>& members) {
  std::map<std::uint64_t, std::set<std::uint64_t>> threads_by_fork;
  for (const auto& [fork, thread] : members) threads_by_fork[fork].insert(thread);
  std::string out;
  for (const auto& [fork, threads] : threads_by_fork) {
    std::string part = fork == 0 ? "" : fmt::format(" fork {}", fork);
    if (!(threads.size() == 1 && *threads.begin() == 0)) {
      part += fmt::format(" {} {}", threads.size() == 1 ? "thread" : "threads",
                          compact_ranges(threads));
    }
    out += (fork == threads_by_fork.begin()->first ? "" : " +") + part;
  }
  return out;
}

}  // namespace

std::string ThreadSet::to_string(bool ranked) const {
  // Group ranks by their members, in order of each group's first rank.
  std::map<std::string, std::set<std::uint64_t>> ranks_by_members;
  for (const auto& [rank, members] : by_rank_) ranks_by_members[members_text(members)].insert(rank);
  std::map<std::uint64_t, std::string> groups;
  for (const auto& [members, ranks] : ranks_by_members) {
    std::string g = fmt::format(
        "{} {}",
        ranks.size() == 1 ? (ranked ? "rank" : "process") : (ranked ? "ranks" : "processes"),
        compact_ranges(ranks));
    groups.emplace(*ranks.begin(), g + members);
  }
  std::string out;
  for (const auto& [first, g] : groups) out += (out.empty() ? "" : "; ") + g;
  return out;
}

}  // namespace parlot::analysis
