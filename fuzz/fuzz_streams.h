// Shared by fuzz_classes and fuzz_stacks: K threads' call-event streams
// (the analysis layer's input, reader/analysis/event.h) decoded from fuzz
// bytes, so no file format stands between the fuzzer and the analyses
// (fuzz_thread_file covers the decoding).
//
// Bytes: threads separated by 0xFF. A thread starts with its rank byte and
// its thread byte (index = byte % 4; a duplicate id takes the next free
// index: the analyses take thread ids as distinct), then events:
//   0x00-0x7F  enter function (byte % 8) of a small alphabet (so streams,
//              stacks and edge sets repeat across threads)
//   0xF0 + 4   enter a function with a huge key built from the 4 bytes
//              (near 2^31 = kMaxValue or near 2^64; never 0)
//   0xF1 + 1   deep nesting: enter alphabet function (n % 8) 4 * (n + 1)
//              times in a row (n = the byte)
//   other      exit
// Well-formed streams (as the reader's CallStackTracker makes them): an
// exit leaves the innermost open call and carries its function and depth;
// an exit at depth 0 is dropped. Malformed streams (`malformed`): an exit
// carries any alphabet function and depth (byte >> 3), also at depth 0,
// as no reader makes them: the analyses must still not crash.
// Calls left open stay open, as at the end of a cut trace or a hang.
// Bounded work per input: at most 32 threads, 1,024 events each, 4,096 in
// all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "event.h"

namespace parlot::fuzz {

using analysis::Event;
using analysis::FunctionKey;
using analysis::ThreadId;

inline constexpr std::size_t kMaxThreads = 32;
inline constexpr std::size_t kMaxEventsPerThread = 1024;
inline constexpr std::size_t kMaxEvents = 4096;

/// Names of the alphabet's functions: ordinary ones and ones that test
/// escaping in the text and DOT output (quotes, backslash, braces, empty,
/// bytes that are not UTF-8).
inline const char* const kNames[8] = {
    "main", "exchange", "ns::f<int>(char const*)", "a\"b\\", "{x}",
    "",     "\xff\xfe", "f -> g [label=\"x\"]"};

struct FuzzThreads {
  std::vector<ThreadId> ids;
  std::vector<std::vector<Event>> streams;
  analysis::NameTable names;  ///< the alphabet (huge keys stay unnamed: "#<hex>")
};

inline FunctionKey alphabet_key(unsigned i) {
  return analysis::function_key(kNames[i % 8]);
}

/// Decodes `bytes` as described above.
inline FuzzThreads threads_of(std::span<const std::uint8_t> bytes, bool malformed) {
  FuzzThreads out;
  for (unsigned i = 0; i < 8; ++i) out.names.add(alphabet_key(i), kNames[i]);
  std::set<ThreadId> used;
  std::size_t total = 0;
  const std::uint8_t* p = bytes.data();
  const std::uint8_t* const end = p + bytes.size();
  while (p < end && out.ids.size() < kMaxThreads) {
    ThreadId id{*p++, 0};
    if (p < end) id.thread = *p++ % 4;
    while (used.contains(id)) ++id.thread;
    used.insert(id);
    std::vector<Event> events;
    std::vector<FunctionKey> open;
    auto enter = [&](FunctionKey f) {
      if (events.size() >= kMaxEventsPerThread || total >= kMaxEvents) return;
      events.push_back({true, f, static_cast<std::uint32_t>(open.size())});
      open.push_back(f);
      ++total;
    };
    for (; p < end && *p != 0xFF; ++p) {
      const std::uint8_t b = *p;
      if (b < 0x80) {
        enter(alphabet_key(b));
      } else if (b == 0xF0 && end - p > 4) {
        std::uint32_t v = 0;
        for (int i = 1; i <= 4; ++i) v = v << 8 | p[i];
        p += 4;
        const std::uint64_t low = v & 0x7fffffffu;
        enter((v & 0x80000000u) == 0 ? 0x7fffffffu - low + 1 : ~std::uint64_t{0} - low);
      } else if (b == 0xF1 && end - p > 1) {
        const unsigned n = *++p;
        for (unsigned i = 0; i < 4 * (n + 1); ++i) enter(alphabet_key(n));
      } else if (events.size() < kMaxEventsPerThread && total < kMaxEvents) {
        if (!malformed) {
          if (open.empty()) continue;
          const FunctionKey f = open.back();
          open.pop_back();
          events.push_back({false, f, static_cast<std::uint32_t>(open.size())});
        } else {
          if (!open.empty()) open.pop_back();
          events.push_back({false, alphabet_key(b), static_cast<std::uint32_t>(b >> 3)});
        }
        ++total;
      }
    }
    if (p < end) ++p;  // the 0xFF
    out.ids.push_back(id);
    out.streams.push_back(std::move(events));
  }
  return out;
}

/// A thread's stream as an EventSource (what the tool's ThreadStream is).
class VectorSource final : public analysis::EventSource {
 public:
  explicit VectorSource(const std::vector<Event>& events) : events_(events) {}
  bool next(Event& e) override {
    if (pos_ == events_.size()) return false;
    e = events_[pos_++];
    return true;
  }
  std::uint64_t last_index() const override { return pos_ - 1; }

 private:
  const std::vector<Event>& events_;
  std::size_t pos_ = 0;
};

/// The open call stack after `events` (outermost first): an entry pushes,
/// an exit pops the innermost open call, if any. Written here, not taken
/// from analysis::OpenStack, so the targets check it.
inline std::vector<FunctionKey> final_stack(std::span<const Event> events) {
  std::vector<FunctionKey> stack;
  for (const Event& e : events) {
    if (e.enter) {
      stack.push_back(e.function);
    } else if (!stack.empty()) {
      stack.pop_back();
    }
  }
  return stack;
}

}  // namespace parlot::fuzz
