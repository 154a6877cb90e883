// The output of `diff` of two runs, kept short: one report per pair of
// threads, grouped when several pairs differ the same way (the same report
// text), ranked earliest divergence first, then largest (the most events
// one side has beyond the other), and cut to a line budget with "... N more
// ... (use --all)".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/event.h"

namespace parlot::tool {

/// One thread's comparison: its report text (without the thread's name),
/// where the two streams part and how far their lengths differ.
struct PairDiff {
  analysis::ThreadId id;
  std::string label;           ///< "rank 2 thread 0"
  bool identical = true;       ///< the two streams are the same
  bool one_sided = false;      ///< the thread is in one run only
  std::uint64_t position = 0;  ///< first divergent event
  std::uint64_t size = 0;      ///< |left events - right events|
  std::string text;            ///< the report ("first divergence at ..." or "only in X")
};

/// Bytes of `pairs` for the leader of a team of readers (SummaryWriter).
std::string write_pair_diffs(const std::vector<PairDiff>& pairs);
/// The pairs write_pair_diffs() wrote; throws std::runtime_error on bytes
/// that are not (they came from another process).
std::vector<PairDiff> read_pair_diffs(std::string_view bytes);

struct RankedDiffOptions {
  std::size_t max_lines = 80;        ///< lines of the whole output (0: no limit, --all)
  std::size_t max_group_lines = 40;  ///< lines of one group's report (0: no limit)
};

/// The text: a first line counting the pairs that differ, are identical or
/// are in one run only; then per group of pairs with the same report, in
/// rank order, "LABELS: REPORT" (the labels compacted as ThreadSet does
/// when the group has more than one thread), each report cut to
/// `max_group_lines` lines ("  ... N more lines (use --all)"), the whole
/// cut to `max_lines` ("... N more differences (use --all): G more groups
/// of threads"). `ranked` as in ThreadSet::to_string().
std::string ranked_diff_text(std::vector<PairDiff> pairs, const std::string& left_label,
                             const std::string& right_label, bool ranked,
                             const RankedDiffOptions& options);

}  // namespace parlot::tool
