// Indentation of the lines of a call tree as parlot-read prints it (`trace`,
// `stacks`): two spaces per level up to kMaxIndentDepth, then the spaces of
// that depth and "[depth N] ", so the text of a thread that died of a stack
// overflow grows linearly with its lines, not with their depth squared; and
// the length of a run of nested frames those texts fold.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>

namespace parlot::analysis {

/// Deepest level indented by its own two spaces.
inline constexpr std::uint32_t kMaxIndentDepth = 256;

/// Shortest run of the same frame at successive depths (a deep recursion)
/// that the texts fold into its first line, "... N more levels of ..." and
/// its last line (`stacks`, the loop-level diff).
inline constexpr std::size_t kFoldedRun = 4;

/// Appends the indentation of a line at `depth` (0: none) to `out`, a
/// std::string or fmt::memory_buffer.
template <class Out>
void append_indent(Out& out, std::uint32_t depth) {
  static const std::string spaces(2 * kMaxIndentDepth, ' ');
  out.append(spaces.data(), spaces.data() + 2 * std::min(depth, kMaxIndentDepth));
  if (depth > kMaxIndentDepth) fmt::format_to(std::back_inserter(out), "[depth {}] ", depth);
}

}  // namespace parlot::analysis
