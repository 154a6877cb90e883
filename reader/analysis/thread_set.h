// A set of threads (rank, thread index) printed as compact ranges, as STAT
// prints task lists: "ranks 0-511,513-1023" or "rank 3 threads 0-7".
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "event.h"

namespace parlot::analysis {

class ThreadSet {
 public:
  void insert(ThreadId t) { by_rank_[t.rank].insert({t.fork, t.thread}); }
  void merge(const ThreadSet& o);
  std::size_t size() const;
  std::size_t ranks() const { return by_rank_.size(); }
  bool empty() const { return by_rank_.empty(); }
  /// Smallest member (ThreadSet must not be empty).
  ThreadId first() const;
  bool contains(ThreadId t) const;

  /// Ranks grouped by their set of thread indices, each group as ranges:
  /// "ranks 0-511,513-1023" (thread 0 only), "rank 512",
  /// "ranks 0-3 threads 0-7; rank 4 threads 0,2". Threads of a rank's other
  /// processes (ThreadId::fork) follow as "fork K [thread(s) ...]":
  /// "ranks 0-1 + fork 1", "rank 3 fork 1 threads 0-1". Deterministic. With
  /// `ranked` false (a run without MPI ranks) "process"/"processes".
  std::string to_string(bool ranked = true) const;

  bool operator==(const ThreadSet&) const = default;

 private:
  // rank -> (fork, thread index) of its members.
  std::map<std::uint64_t, std::set<std::pair<std::uint64_t, std::uint64_t>>> by_rank_;
};

/// "0-3,5,7-9" for a sorted set of numbers.
std::string compact_ranges(const std::set<std::uint64_t>& numbers);

}  // namespace parlot::analysis
