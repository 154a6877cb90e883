// The call site of every entry event of a thread, from its call-site side
// records (docs/FORMAT.md "Kind 6, call sites"). The runtime writes a
// record only when the site of an entry's context (the caller's own site,
// the callee, and the site of the caller's previous callee) differs from the one it last
// wrote for that context (or when its table lost track of it), so a reader keeps the last site of
// every context and gives each entry the site of its context: the record's when the entry has one,
// the context's otherwise.
#pragma once

#include <cstdint>
#include <functional>
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
    Open& parent = open_.back();
    const Context key{callee, parent.last_child_site, parent.site};
    if (next_ < records_.size() && records_[next_].event_index == index) [[unlikely]] {
      // Several records for one entry (a damaged file): the last one holds.
      while (next_ < records_.size() && records_[next_].event_index == index) ++next_;
      site = records_[next_ - 1].address;
      by_context_[key] = site;
    } else if (!records_.empty()) {
      const auto it = by_context_.find(key);
      if (it != by_context_.end()) site = it->second;
    }
    const bool inlined = site != 0 && open_.size() > 1 && parent.site == site && callee != caller;
    parent.last_child_site = site;
    open_.push_back({site, 0});
    return last_ = inlined ? 0 : site;
  }

  /// The exit of the innermost open entry.
  void at_exit() {
    if (open_.size() > 1) open_.pop_back();
  }

  /// What the last at_entry() returned (0 before the first).
  std::uint64_t last() const { return last_; }

  /// True when the thread has call-site records at all.
  bool any() const { return !records_.empty(); }

 private:
  std::span<const CallSite> records_;
  std::size_t next_ = 0;
  std::uint64_t last_ = 0;
  // An entry's context: the callee, the site of the caller's previous
  // callee, and the caller's own site (the runtime's key: it names the
  // caller, and which inlined copy of it).
  struct Context {
    std::uint64_t callee;
    std::uint64_t previous;
    std::uint64_t caller_site;
    bool operator==(const Context&) const = default;
  };
  struct ContextHash {
    std::size_t operator()(const Context& c) const {
      return std::hash<std::uint64_t>()(
          (c.callee * 0x9e3779b97f4a7c15ull ^ c.previous) * 0xc2b2ae3d27d4eb4full ^ c.caller_site);
    }
  };
  // An open entry: its recorded site and that of its last callee.
  struct Open {
    std::uint64_t site;
    std::uint64_t last_child_site;
  };
  std::unordered_map<Context, std::uint64_t, ContextHash> by_context_;
  std::vector<Open> open_{{0, 0}};  // the outermost frames' caller first
};

}  // namespace parlot
