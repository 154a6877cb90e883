// libFuzzer target: the analyses of parlot-read (issue 9) on arbitrary call
// streams: nested loop recognition (reader/analysis/loops.h) and the
// loop-level diff (loop_diff.h). The input is two event streams and a loop
// body limit, so no file format stands between the fuzzer and the
// algorithms (fuzz_thread_file covers the decoding).
//
// Input: byte 0 picks K (1..12, the longest loop body); the rest is the left
// stream, then 0xFF, then the right stream. In a stream a byte below 0x80
// enters function (byte % 6) + 1 (a small alphabet, so loops form); any
// other byte exits the innermost open call (ignored at depth 0). Calls left
// open stay open, as at the end of a cut trace.
//
// Checks (the properties the unit tests check on random trees):
// - NLR is lossless: expand() gives back exactly the stream, event_count()
//   its length; equal streams give equal structure hashes;
// - diff_loops() is empty exactly when the two streams are equal, and its
//   text is produced without error.
// Bounded work per input: at most 4,096 events per stream.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_support.h"
#include "loop_diff.h"
#include "loops.h"

namespace {

using parlot::analysis::Event;

constexpr std::size_t kMaxEvents = 4096;

std::vector<Event> stream_of(const std::uint8_t* p, const std::uint8_t* end) {
  std::vector<Event> events;
  std::vector<std::uint64_t> open;
  for (; p < end && events.size() < kMaxEvents; ++p) {
    if (*p < 0x80) {
      const std::uint64_t f = (*p % 6) + 1;
      events.push_back({true, f, static_cast<std::uint32_t>(open.size())});
      open.push_back(f);
    } else if (!open.empty()) {
      const std::uint64_t f = open.back();
      open.pop_back();
      events.push_back({false, f, static_cast<std::uint32_t>(open.size())});
    }
  }
  return events;
}

parlot::analysis::LoopSummary summarise(const std::vector<Event>& events, std::size_t k) {
  parlot::analysis::LoopBuilder builder(k);
  for (const Event& e : events) builder.push(e);
  return builder.finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t k = 1 + data[0] % 12;
  const std::uint8_t* const end = data + size;
  const std::uint8_t* split = data + 1;
  while (split < end && *split != 0xFF) ++split;
  const std::vector<Event> left = stream_of(data + 1, split);
  const std::vector<Event> right = stream_of(split < end ? split + 1 : end, end);

  const parlot::analysis::LoopSummary l = summarise(left, k);
  const parlot::analysis::LoopSummary r = summarise(right, k);
  PARLOT_FUZZ_CHECK(l.expand() == left);
  PARLOT_FUZZ_CHECK(r.expand() == right);
  PARLOT_FUZZ_CHECK(l.event_count() == left.size());
  PARLOT_FUZZ_CHECK(r.event_count() == right.size());
  if (left == right) PARLOT_FUZZ_CHECK(l.structure_hash() == r.structure_hash());

  parlot::analysis::NameTable names;
  const auto lines = parlot::analysis::diff_loops(l, r, names);
  PARLOT_FUZZ_CHECK(lines.empty() == (left == right));
  PARLOT_FUZZ_CHECK(!parlot::analysis::describe_loop_diff(lines).empty());
  PARLOT_FUZZ_CHECK(!l.to_string(names).empty() || left.empty());
  return 0;
}
