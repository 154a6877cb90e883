// libFuzzer target: a whole thread trace file through ThreadEventReader and
// CallStackTracker, the way parlot-read walks a thread (reader/tool/
// thread_walk.h). The input is the file.
//
// Only parlot::FormatError may escape the library; any other exception,
// crash, leak or hang is a finding. Checks beyond that: the summary is
// consistent with the file (marks sorted and inside it), batches are
// non-empty, and a file that reads to
// its end without an error yields exactly the event count of its trailer
// (or final block) as trace_reader.h promises.
//
// The tracker's function count (IDs 1..count valid, 0 = no table, any ID
// accepted) is taken from the low 32 bits of the header's first reserved
// word, which the reader ignores: real traces (reserved = 0) are checked as
// without a function table, and the fuzzer can reach the "unknown function
// ID" path by mutating it.
//
// Work per input is bounded (kMaxEvents, two turns of the codec's 64K
// history): a few bytes of LZ data legitimately stand for millions of events.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fuzz_support.h"
#include "parlot/call_stack_tracker.h"
#include "parlot/trace_reader.h"

namespace {

constexpr std::uint64_t kMaxEvents = 1u << 17;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = parlot::fuzz::input_file().write(data, size);
  std::uint64_t function_count = 0;
  if (size >= 52) {
    std::uint32_t c;
    std::memcpy(&c, data + 48, sizeof c);
    function_count = c;
  }
  try {
    parlot::ThreadEventReader reader(path);
    const parlot::ThreadTraceSummary& s = reader.summary();
    PARLOT_FUZZ_CHECK(s.file_bytes == size);
    PARLOT_FUZZ_CHECK(s.payload_bytes + 16 * s.blocks + 64 <= size);
    PARLOT_FUZZ_CHECK(!s.trailer || s.final_events);
    PARLOT_FUZZ_CHECK(!s.trailer || s.trailer->events == *s.final_events);
    PARLOT_FUZZ_CHECK(!s.trailer || s.trailer->payload_bytes == s.payload_bytes);
    PARLOT_FUZZ_CHECK(s.trailer.has_value() == s.damage.empty());
    PARLOT_FUZZ_CHECK(s.damage.empty() || s.damage_offset <= size);
    // Marks: sorted by event index, each a 16-byte record header plus its
    // label inside the file.
    std::uint64_t mark_bytes = 0;
    for (std::size_t i = 0; i < s.marks.size(); ++i) {
      PARLOT_FUZZ_CHECK(i == 0 || s.marks[i - 1].event_index <= s.marks[i].event_index);
      mark_bytes += 16 + s.marks[i].label.size();
    }
    PARLOT_FUZZ_CHECK(mark_bytes <= size);
    const std::uint64_t limit = s.final_events ? *s.final_events : ~std::uint64_t{0};

    parlot::CallStackTracker tracker(function_count, path);
    std::uint64_t events = 0;
    bool ended = false;
    while (events < kMaxEvents) {
      const auto batch = reader.next_batch();
      if (batch.empty()) {
        ended = true;
        break;
      }
      events += batch.size();
      PARLOT_FUZZ_CHECK(events == reader.events_read());
      PARLOT_FUZZ_CHECK(events <= limit);
      for (const std::uint32_t id : batch) {
        const parlot::CallEvent e = tracker.push(id);
        PARLOT_FUZZ_CHECK(e.function_id != 0);
        PARLOT_FUZZ_CHECK(e.depth == tracker.open_calls().size() -
                                         (e.kind == parlot::CallEvent::Kind::kEnter ? 1 : 0));
      }
    }
    if (ended) {
      PARLOT_FUZZ_CHECK(reader.next_batch().empty());
      if (s.final_events) PARLOT_FUZZ_CHECK(events == *s.final_events);
    }
  } catch (const parlot::FormatError& e) {
    PARLOT_FUZZ_CHECK(e.what()[0] != '\0');
  }
  return 0;
}
