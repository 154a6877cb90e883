// The filter stage (issue 9 §5): events in, events out, nesting kept. A
// function dropped by the filter disappears from the stream and its callees
// nest under its nearest kept caller; --max-depth drops frames at that
// depth of the filtered tree and deeper.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "parlot/call_stack_tracker.h"

namespace parlot::analysis {

/// Which functions a view keeps, by name and by DSO (ECMAScript regexes,
/// matched anywhere in the text: std::regex_search).
struct FunctionFilter {
  std::vector<std::string> include;  ///< keep only names matching one (empty: all)
  std::vector<std::string> exclude;  ///< drop names matching one
  std::string module;                ///< keep only functions whose DSO path matches (empty: all)
  std::uint32_t max_depth = 0;       ///< keep frames at filtered depth < max_depth (0: all)
  /// Keep only MPI calls (names MPI_*, PMPI_*, mpi_*, pmpi_*, any case) and
  /// the functions on their call paths (callers seen above an MPI call in
  /// the process's selected threads): the views' --mpi.
  bool mpi = false;

  /// True when the filter keeps every event.
  bool keeps_everything() const {
    return include.empty() && exclude.empty() && module.empty() && max_depth == 0 && !mpi;
  }
};

/// Compiled FunctionFilter. Throws std::regex_error on a bad pattern.
class FunctionMatcher {
 public:
  explicit FunctionMatcher(const FunctionFilter& filter);
  /// Whether a function named `name` from the object `dso` is kept.
  bool keeps(const std::string& name, const std::string& dso) const;

 private:
  std::vector<std::regex> include_, exclude_;
  std::optional<std::regex> module_;
};

/// Streaming filter over one thread's CallEvents (function IDs of one
/// process). O(1) per event; memory: two bits and one ID per open frame.
class FilterStage {
 public:
  /// `keep[id]`: whether function ID `id` is kept (IDs beyond the vector
  /// are kept). `max_depth`: 0 = unlimited.
  FilterStage(std::vector<bool> keep, std::uint32_t max_depth)
      : keep_(std::move(keep)), max_depth_(max_depth) {}

  /// Filters `in` (the tracker's event); returns true and sets `out` (with
  /// the filtered depth and nearest kept caller) when it is kept.
  bool push(const CallEvent& in, CallEvent& out) {
    if (in.kind == CallEvent::Kind::kEnter) {
      const bool kept = (in.function_id >= keep_.size() || keep_[in.function_id]) &&
                        (max_depth_ == 0 || kept_.size() < max_depth_);
      emitted_.push_back(kept);
      if (!kept) return false;
      out = {CallEvent::Kind::kEnter, in.function_id, static_cast<std::uint32_t>(kept_.size()),
             kept_.empty() ? 0 : kept_.back()};
      kept_.push_back(in.function_id);
      return true;
    }
    if (emitted_.empty()) return false;  // the tracker rejects this first
    const bool kept = emitted_.back();
    emitted_.pop_back();
    if (!kept) return false;
    kept_.pop_back();
    out = {CallEvent::Kind::kExit, in.function_id, static_cast<std::uint32_t>(kept_.size()),
           kept_.empty() ? 0 : kept_.back()};
    return true;
  }

  /// Frames open in the filtered stream (the depth of what comes next).
  std::uint32_t depth() const { return static_cast<std::uint32_t>(kept_.size()); }

 private:
  std::vector<bool> keep_;
  std::uint32_t max_depth_;
  std::vector<bool> emitted_;        // per open input frame
  std::vector<std::uint32_t> kept_;  // open kept frames
};

}  // namespace parlot::analysis
