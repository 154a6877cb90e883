// The call site of every entry event of a thread, from its call-site side
// records (docs/FORMAT.md "Kind 6, call sites"). The runtime writes a
// record only when the site of a (caller, callee) pair differs from the
// one it last wrote for that pair (or when its table lost track of it), so
// a reader keeps the last site of every pair and gives each entry the site
// of its pair: the record's when the entry has one, the pair's otherwise.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>

#include "parlot/trace_reader.h"

namespace parlot {

class CallSites {
 public:
  /// `records`: ThreadTraceSummary::call_sites of the thread (kept by
  /// reference: it must outlive this object), in stream order.
  explicit CallSites(std::span<const CallSite> records) : records_(records) {}

  /// The call site (return address, run-time; 0 = unknown) of the entry
  /// event with absolute index `index` into `callee` from `caller`
  /// (function IDs; caller 0 for an outermost frame). 0 also for an entry
  /// the runtime recorded with site 0: a function inlined into its caller
  /// (its hook was handed the caller's own call site). Call it for the
  /// thread's entry events in stream order (exits are not passed): records
  /// about an earlier index that was not passed (an exit's, a damaged
  /// file's) are skipped. Unknown (0) when no record gave the pair a site:
  /// a trace without call sites, or a frame the runtime found open (a fork
  /// child's first frames of a trace recorded before sites existed).
  std::uint64_t at_entry(std::uint64_t index, std::uint32_t caller, std::uint32_t callee) {
    while (next_ < records_.size() && records_[next_].event_index < index) ++next_;
    const std::uint64_t key = (std::uint64_t{caller} << 32) | callee;
    if (next_ < records_.size() && records_[next_].event_index == index) [[unlikely]] {
      // Several records for one entry (a damaged file): the last one holds.
      while (next_ < records_.size() && records_[next_].event_index == index) ++next_;
      const std::uint64_t last = records_[next_ - 1].address;
      by_pair_[key] = last;
      return last_ = last;
    }
    if (records_.empty()) return 0;
    const auto it = by_pair_.find(key);
    return last_ = it == by_pair_.end() ? 0 : it->second;
  }

  /// What the last at_entry() returned (0 before the first).
  std::uint64_t last() const { return last_; }

  /// True when the thread has call-site records at all.
  bool any() const { return !records_.empty(); }

 private:
  std::span<const CallSite> records_;
  std::size_t next_ = 0;
  std::uint64_t last_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> by_pair_;
};

}  // namespace parlot
