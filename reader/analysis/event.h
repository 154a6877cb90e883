// The analysis layer's input: a thread's decoded, filtered call-event
// stream with functions named across processes. Analyses consume these
// streams, never files, so a thread pool or an MPI reduction can wrap them
// (each result type has a merge()).
#pragma once

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parlot/trace_reader.h"

namespace parlot::analysis {

/// A function as analyses see it: the 64-bit FNV-1a hash of its display
/// name, the same in every process (function IDs differ between processes).
using FunctionKey = std::uint64_t;

/// FNV-1a (64-bit) of `name`; never 0 (0 stands for "no function").
FunctionKey function_key(std::string_view name);

/// One event of a thread: entry into `function` or exit from it. `depth`:
/// 0 for the thread's outermost frame (after filtering).
struct Event {
  bool enter = true;
  FunctionKey function = 0;
  std::uint32_t depth = 0;
  bool operator==(const Event&) const = default;
};

/// A thread of the program: its process's MPI rank (or, without a rank, the
/// process's position in the trace directory, sorted as the reader sorts),
/// its thread index within the process, and `fork`: 0 for the first process
/// of that rank (by start time), k for the k-th other one (a fork child of
/// a rank records its parent's rank). Ordered by rank, fork, thread.
struct ThreadId {
  std::uint64_t rank = 0;
  std::uint64_t thread = 0;
  std::uint64_t fork = 0;
  bool operator==(const ThreadId&) const = default;
  std::strong_ordering operator<=>(const ThreadId& o) const {
    if (rank != o.rank) return rank <=> o.rank;
    if (fork != o.fork) return fork <=> o.fork;
    return thread <=> o.thread;
  }
};

/// A pull stream of events (one thread, in order).
class EventSource {
 public:
  virtual ~EventSource() = default;
  /// Next event into `e`; false at the end. Throws FormatError (the
  /// decoder's) on corrupt input.
  virtual bool next(Event& e) = 0;
  /// The next events, a batch at a time, into `out` (resized to the batch);
  /// false at the end. The same stream as next(); do not mix the two but
  /// to take the rest of a stream after some next() calls. The default
  /// calls next() up to 4096 times. Throws as next() does.
  virtual bool next_events(std::vector<Event>& out);
  /// The thread's user marks, sorted by event index, with their labels as
  /// they are to be shown (the source escapes them); empty when it has none.
  virtual std::span<const Mark> marks() const { return {}; }
  /// Index, in the thread's unfiltered stream, of the event next() returned
  /// last (with marks(): places each mark before its event).
  virtual std::uint64_t last_index() const { return 0; }
  /// The call site (run-time return address in the thread's process; 0:
  /// unknown, or not tracked) of the entry event next() returned last;
  /// 0 after an exit. The default knows no sites.
  virtual std::uint64_t last_site() const { return 0; }
};

/// FunctionKey -> display name, merged over processes.
class NameTable {
 public:
  void add(FunctionKey key, const std::string& name) { names_.try_emplace(key, name); }
  /// The name of `key`, or "#<hex key>" when it was never added.
  std::string name(FunctionKey key) const;
  void merge(const NameTable& other) {
    for (const auto& [k, v] : other.names_) names_.try_emplace(k, v);
  }
  const std::unordered_map<FunctionKey, std::string>& all() const { return names_; }

 private:
  std::unordered_map<FunctionKey, std::string> names_;
};

}  // namespace parlot::analysis
