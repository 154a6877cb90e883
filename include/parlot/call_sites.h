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
#include <vector>

#include "parlot/trace_reader.h"

namespace parlot {

class CallSites {
 public:
  /// `records`: ThreadTraceSummary::call_sites of the thread (kept by
  /// reference: it must outlive this object), in stream order.
  explicit CallSites(std::span<const CallSite> records) : records_(records) {}

  /// The call site (return address, run-time; 0 = unknown) of the entry
  /// event with absolute index `index` into `callee` from `caller`
  /// (function IDs; caller 0 for an outermost frame). Feed it the thread's
  /// events in stream order: every entry through at_entry(), every exit
  /// through at_exit(). Records about an earlier index that was not an
  /// entry (a damaged file) are skipped. Unknown (0) when no record gave
  /// the pair a site (a trace without call sites), and for a callee
  /// inlined into its caller: its hook was handed the caller's own call
  /// site (the same site as the caller's entry, another function), not a
  /// line of the caller.
  std::uint64_t at_entry(std::uint64_t index, std::uint32_t caller, std::uint32_t callee) {
    std::uint64_t site = 0;
    while (next_ < records_.size() && records_[next_].event_index < index) ++next_;
    const std::uint64_t key = (std::uint64_t{caller} << 32) | callee;
    if (next_ < records_.size() && records_[next_].event_index == index) [[unlikely]] {
      // Several records for one entry (a damaged file): the last one holds.
      while (next_ < records_.size() && records_[next_].event_index == index) ++next_;
      site = records_[next_ - 1].address;
      by_pair_[key] = site;
    } else if (!records_.empty()) {
      const auto it = by_pair_.find(key);
      if (it != by_pair_.end()) site = it->second;
    }
    const bool inlined = site != 0 && !open_.empty() && open_.back() == site && callee != caller;
    open_.push_back(site);
    return last_ = inlined ? 0 : site;
  }

  /// The exit of the innermost open entry.
  void at_exit() {
    if (!open_.empty()) open_.pop_back();
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
  std::vector<std::uint64_t> open_;  // the recorded site of every open entry
};

}  // namespace parlot
