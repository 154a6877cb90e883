// Event streams the codec benchmarks feed their producers: a thread's events
// as recorded by the runtime, or a synthetic call-dense stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <vector>

#include "parlot/trace_reader.h"

namespace parlot::bench {

/// The events (function IDs, 0 = exit) of one recorded thread trace file, at
/// most `max_events` of them. Throws FormatError on a corrupt or truncated
/// file (parlot/trace_reader.h).
inline std::vector<std::uint32_t> recorded_events(
    const std::filesystem::path& thread_file,
    std::uint64_t max_events = std::numeric_limits<std::uint64_t>::max()) {
  std::vector<std::uint32_t> v;
  ThreadEventReader reader(thread_file);
  for (auto b = reader.next_batch(); !b.empty() && v.size() < max_events; b = reader.next_batch()) {
    v.insert(v.end(), b.begin(), b.end());
  }
  if (v.size() > max_events) v.resize(max_events);
  return v;
}

/// `n` events of a synthetic call-dense stream: a main loop over a kernel
/// that calls two helpers in an inner loop of varying length, and now and
/// then one of a few hundred other functions (fixed seed: always the same).
inline std::vector<std::uint32_t> synthetic_call_stream(std::size_t n) {
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  auto rnd = [&x] {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 0x2545f4914f6cdd1dull >> 32;
  };
  std::vector<std::uint32_t> v{1};  // main
  v.reserve(n + 64);
  while (v.size() < n) {
    v.push_back(2);  // kernel
    const std::uint64_t inner = 8 + rnd() % 17;
    for (std::uint64_t i = 0; i < inner; ++i) {
      v.insert(v.end(), {3, 0});                      // helper
      if (rnd() % 4 == 0) v.insert(v.end(), {4, 0});  // second helper, sometimes
    }
    if (rnd() % 64 == 0) {
      v.push_back(static_cast<std::uint32_t>(100 + rnd() % 500));
      v.insert(v.end(), {5, 0, 0});
    }
    v.push_back(0);
  }
  v.resize(n);
  return v;
}

}  // namespace parlot::bench
