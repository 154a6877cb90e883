// Call counts of one thread by function ID (per function and per caller ->
// callee edge), built from a call-event stream at O(1) per entry with no
// hashing on the common path: issue 9 §6 (stats at >= 100 M events/s).
#pragma once

#include <cstdint>
#include <vector>

namespace parlot::analysis {

/// Counts caller -> callee edges of one process's function IDs (0 as the
/// caller: the thread's outermost frame). An edge is found through the
/// callee's last caller (a dense array indexed by callee ID, up to the
/// `function_count` given) and, when that is another caller or the ID is
/// beyond the array, an open-addressing hash table of the edges. Memory:
/// 4 bytes per function ID plus 24 per distinct edge; never per event.
class CallCounts {
 public:
  /// One edge and how often the callee was entered from that caller.
  struct Edge {
    std::uint32_t caller = 0;
    std::uint32_t callee = 0;
    std::uint64_t calls = 0;
  };

  /// `function_count`: IDs 1..function_count get the dense fast path
  /// (larger IDs are still counted, through the hash table).
  explicit CallCounts(std::uint64_t function_count);

  /// Counts one entry into `callee` from `caller`. Inline: the per-event
  /// loop of `stats`.
  void add(std::uint32_t caller, std::uint32_t callee) {
    if (callee < last_.size()) [[likely]] {
      Edge& e = edges_[last_[callee]];
      if (e.caller == caller && e.callee == callee) [[likely]] {
        ++e.calls;
        return;
      }
    }
    add_slow(caller, callee);
  }

  /// Every edge seen, with its count, in order of first sight.
  std::vector<Edge> edges() const { return {edges_.begin() + 1, edges_.end()}; }

 private:
  void add_slow(std::uint32_t caller, std::uint32_t callee);
  void grow();

  std::vector<std::uint32_t> last_;   // [callee ID] -> index into edges_ (0: none)
  std::vector<Edge> edges_;           // [0]: a sentinel no entry matches
  std::vector<std::uint32_t> table_;  // open addressing: index into edges_, 0 = empty
};

}  // namespace parlot::analysis
