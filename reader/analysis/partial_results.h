// The partial results of `stacks`, `classes` and `stats` that a member of an
// mpirun'd parlot-read sends to the leader (issue 9 §7), and their byte
// encoding (summary_bytes.h). The leader parses bytes another process
// wrote: the read_* functions check every count against the bytes left
// (memory bounded by the input's size), the process indices against the
// run, the status against 0..255, and that no byte is left over. They throw
// std::runtime_error on anything else, never crash. fuzz/fuzz_stacks.cpp
// feeds them arbitrary bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "event.h"

namespace parlot::analysis {

/// `stacks`: each owned thread's open call stack at the end of its trace,
/// and the names of the functions on them.
struct StacksPartial {
  struct Thread {
    ThreadId id;
    std::vector<FunctionKey> stack;  ///< outermost first
    bool operator==(const Thread&) const = default;
  };
  int status = 0;  ///< the member's exit status so far (0..255)
  std::vector<Thread> threads;
  std::vector<std::pair<FunctionKey, std::string>> names;
  bool operator==(const StacksPartial&) const = default;
};

/// `classes`: each owned thread's class hash and, for --similarity, its
/// caller -> callee edge hashes (sorted).
struct ClassesPartial {
  struct Thread {
    std::uint64_t process = 0;  ///< index in the trace directory: the serial order
    ThreadId id;
    std::uint64_t hash = 0;
    std::vector<std::uint64_t> edges;
    bool operator==(const Thread&) const = default;
  };
  int status = 0;
  std::vector<Thread> threads;
  bool operator==(const ClassesPartial&) const = default;
};

/// Call counts keyed by function name (as shown), so processes whose
/// function IDs differ merge exactly.
struct NamedCallStats {
  std::map<std::string, std::uint64_t> calls;
  std::map<std::pair<std::string, std::string>, std::uint64_t> edges;  ///< caller, callee
  std::uint64_t marks = 0;  ///< user marks (never filtered out)

  void merge(const NamedCallStats& o) {
    marks += o.marks;
    for (const auto& [k, v] : o.calls) calls[k] += v;
    for (const auto& [k, v] : o.edges) edges[k] += v;
  }
  bool operator==(const NamedCallStats&) const = default;
};

/// `stats`: one NamedCallStats per unit the member printed for (a thread,
/// a process or the whole program; see stats_command.cpp).
struct StatsPartial {
  struct Unit {
    std::uint64_t process = 0;   ///< index in the trace directory
    std::uint64_t position = 0;  ///< thread's position in its process (--by thread)
    std::uint64_t tid = 0;
    std::uint64_t thread = 0;  ///< thread index
    NamedCallStats stats;
    bool operator==(const Unit&) const = default;
  };
  int status = 0;
  std::vector<Unit> units;
  bool operator==(const StatsPartial&) const = default;
};

/// Bytes of `p` (unsigned LEB128 numbers, length-prefixed strings).
std::string write_stacks_partial(const StacksPartial& p);
std::string write_classes_partial(const ClassesPartial& p);
std::string write_stats_partial(const StatsPartial& p);

/// Parses what the matching write_* wrote. `process_count`: processes in
/// the run (a thread's or unit's process index must be below it). Throws
/// std::runtime_error on bytes cut short, malformed, left over or out of
/// range. Memory: O(bytes.size()), whatever the counts say.
StacksPartial read_stacks_partial(std::string_view bytes);
ClassesPartial read_classes_partial(std::string_view bytes, std::uint64_t process_count);
StatsPartial read_stats_partial(std::string_view bytes, std::uint64_t process_count);

}  // namespace parlot::analysis
