// Which clock samples a thread keeps (docs/DESIGN.md, "Time as side
// records"): the swing-door filter of process historians (E. H. Bristol,
// "Swinging door trending", ISA 1990), in the variant that keeps only
// samples actually read, so the reader's straight-line interpolation
// between kept samples (docs/FORMAT.md, kind 1) is within the tolerance of
// every sample read. A steady event rate keeps two samples per segment;
// the filter costs O(1) per sample read and no memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace parlot::runtime {

class ClockSampleFilter {
 public:
  /// `tolerance_ns`: largest error (ns) allowed between a sample read and
  /// the line through the kept samples around it; 0 keeps every sample.
  void set_tolerance_ns(std::uint64_t tolerance_ns) { tolerance_ns_ = tolerance_ns; }
  std::uint64_t tolerance_ns() const { return tolerance_ns_; }

  /// Keeps sample (`index` events, `ns`) and starts a segment from it
  /// (thread start). `keep(index, ns)` is called for it.
  template <class Keep>
  void start(std::uint64_t index, std::uint64_t ns, Keep&& keep) {
    keep(index, ns);
    door_index_ = index;
    door_ns_ = ns;
    low_ = -std::numeric_limits<double>::infinity();
    high_ = std::numeric_limits<double>::infinity();
    has_candidate_ = false;
  }

  /// A sample read on the way (every PARLOT_CLOCK_EVENTS events): becomes the
  /// candidate end of the current segment when the line to it passes within
  /// the tolerance of every sample read since the segment's start;
  /// otherwise the previous candidate is kept (`keep` called) and starts the
  /// next segment. Samples that go back in index or time are ignored.
  template <class Keep>
  void offer(std::uint64_t index, std::uint64_t ns, Keep&& keep) {
    if (tolerance_ns_ == 0) {
      keep(index, ns);
      door_index_ = index;
      door_ns_ = ns;
      return;
    }
    if (index <= door_index_ || ns < door_ns_) return;
    const double s = slope(index, ns);
    if (has_candidate_ && (s < low_ || s > high_)) {
      start(candidate_index_, candidate_ns_, keep);
      if (index <= door_index_ || ns < door_ns_) return;
    }
    has_candidate_ = true;
    candidate_index_ = index;
    candidate_ns_ = ns;
    const double dt = static_cast<double>(ns - door_ns_);
    const double di = static_cast<double>(index - door_index_);
    const double tol = static_cast<double>(tolerance_ns_);
    low_ = std::max(low_, (dt - tol) / di);
    high_ = std::min(high_, (dt + tol) / di);
  }

  /// Keeps the pending candidate, if any, and starts the next segment from
  /// it (a flush: the samples kept so far then place every sample offered
  /// so far, without a sample of its own). `keep` is called for it.
  template <class Keep>
  void commit(Keep&& keep_fn) {
    if (tolerance_ns_ == 0 || !has_candidate_) return;  // tolerance 0: all kept already
    start(candidate_index_, candidate_ns_, keep_fn);
  }

  /// A sample that must be kept (a flush, the thread's end): offered first,
  /// so the pending candidate is kept when the line to this one would miss
  /// the tolerance, then kept and made the start of the next segment.
  template <class Keep>
  void keep(std::uint64_t index, std::uint64_t ns, Keep&& keep_fn) {
    if (tolerance_ns_ == 0) {
      offer(index, ns, keep_fn);
      return;
    }
    offer(index, ns, keep_fn);
    start(index, ns, keep_fn);
  }

 private:
  double slope(std::uint64_t index, std::uint64_t ns) const {
    return static_cast<double>(ns - door_ns_) / static_cast<double>(index - door_index_);
  }

  std::uint64_t tolerance_ns_ = 0;
  std::uint64_t door_index_ = 0;  // the last kept sample
  std::uint64_t door_ns_ = 0;
  double low_ = 0;   // window of slopes (ns per event) from the last kept
  double high_ = 0;  // sample that pass within the tolerance of all read since
  bool has_candidate_ = false;
  std::uint64_t candidate_index_ = 0;
  std::uint64_t candidate_ns_ = 0;
};

}  // namespace parlot::runtime
