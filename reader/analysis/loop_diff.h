// Loop-level diff of two threads (issue 9 §4; DiffTrace's diffNLR, Bhattacharyya
// et al., IEEE Cluster 2019): the two threads' loop summaries (loops.h)
// aligned item by item with a longest-common-subsequence diff (Myers'
// O((N+M)D) algorithm), recursing into calls of the same function and loops
// of the same shape that differ, so two long runs read as
//     main {
//   <   1000 x [ step { exchange compute } ]
//   >   999 x [ step { exchange compute } ]
//     }
// instead of a million lines. The cost is in the size of the summaries
// (their distinct items), not in the events they stand for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "event.h"
#include "loops.h"

namespace parlot::analysis {

/// One line of a loop-level diff.
struct LoopDiffLine {
  /// ' ' the same on both sides (or the frame of a change), '<' left only,
  /// '>' right only.
  char side = ' ';
  std::uint32_t depth = 0;  ///< nesting (calls and loops) above the line
  std::string text;         ///< an item ("f { g h }", "3 x [ g ]"), a frame ("f {", "}") or
                            ///< "... N common items (E events)"
  bool operator==(const LoopDiffLine&) const = default;
};

struct LoopDiffOptions {
  std::size_t context = 2;  ///< common items shown before and after each change
  /// Edits (deleted + inserted items) searched for in one list, also capped
  /// at about 10^8 / (N + M) so one list costs about 10^8 steps at most;
  /// past that the list is shown as replaced after its common prefix and
  /// suffix.
  std::size_t max_edits = 2000;
  std::size_t max_text = 200;  ///< characters of one item's text (longer ones end in "...")
};

/// Aligns `left` and `right` (two summaries of any two threads: each has
/// its own call and body IDs) and returns the diff lines, outermost list
/// first. Equal summaries give no line. Time O((N + M) D) per list of N and
/// M items with D edits, plus O(distinct items) to hash both summaries.
std::vector<LoopDiffLine> diff_loops(const LoopSummary& left, const LoopSummary& right,
                                     const NameTable& names, const LoopDiffOptions& options = {});

/// The lines as text, one per line: side mark, a space, the indentation of
/// the depth (analysis/indent.h: two spaces per level, "[depth N] " beyond
/// 256), the text. A run of kFoldedRun (indent.h) or more lines of the same text at
/// depths d, d+1, ... (or d, d-1, ...) gives its first line, "... N more
/// levels of "TEXT"" one level inside, and its last line. "(loop summaries
/// are equal)" for no line.
std::string describe_loop_diff(const std::vector<LoopDiffLine>& lines);

/// Shortest edit script of two key sequences (Myers 1986, "An O(ND)
/// difference algorithm"): for each step, 0 = keep a[i] == b[j], 1 = delete
/// a[i], 2 = insert b[j], in order. Returns false (and leaves `ops` empty)
/// when more than `max_edits` deletions + insertions would be needed.
bool shortest_edit_script(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b,
                          std::size_t max_edits, std::vector<std::uint8_t>& ops);

}  // namespace parlot::analysis
