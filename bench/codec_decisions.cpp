// Codec 2's decision points per recorded stream, for format version 4 and
// the newest (issue 12): events, decision points (events that did not
// continue a match: Encoder::try_extend() returned false), compressed
// bytes, and the encoder's time alone (best of 3 passes, ns per event,
// steady clock, one thread). A decision point is where codec 2 spends its
// modelling and coding work; an event that continues a match costs only
// try_extend().
//
// Usage: codec_decisions TRACE... (thread trace files, any codec; see
// docs/FORMAT.md). Prints one line per stream and version.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "event_streams.h"
#include "parlot/codec.h"
#include "parlot/format.h"

namespace {

namespace v2 = parlot::codec::v2;

// Counts the bytes drained through one 256 KiB window.
struct CountingSink {
  std::vector<std::uint8_t> window = std::vector<std::uint8_t>(std::size_t{1} << 18);
  std::uint64_t bytes = 0;
  parlot::codec::OutputWindow fresh() { return {window.data(), window.data() + window.size()}; }
  void drain(parlot::codec::OutputWindow& w) {
    bytes += static_cast<std::uint64_t>(w.cur - window.data());
    w.cur = window.data();
  }
};

struct Result {
  std::uint64_t decisions = 0;
  std::uint64_t bytes = 0;
  double ns_per_event = 0;
};

Result measure(const std::vector<std::uint32_t>& events, unsigned version) {
  Result r;
  {
    CountingSink sink;
    auto enc = std::make_unique<v2::Encoder>(sink, sink.fresh(), version);
    for (const std::uint32_t v : events) {
      if (!enc->try_extend(v)) {
        ++r.decisions;
        enc->encode(v);
      }
    }
    enc->finish();
    sink.drain(enc->window());
    r.bytes = sink.bytes;
  }
  double best = 1e300;
  for (int pass = 0; pass < 3; ++pass) {
    CountingSink sink;
    auto enc = std::make_unique<v2::Encoder>(sink, sink.fresh(), version);
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::uint32_t v : events) enc->encode(v);
    enc->finish();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  r.ns_per_event = best / static_cast<double>(events.size());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: codec_decisions TRACE...\n");
    return 2;
  }
  std::printf(
      "| stream | version | events | decision points | events per decision | bytes | "
      "encoder ns/event |\n|---|---|---|---|---|---|---|\n");
  for (int i = 1; i < argc; ++i) {
    const std::vector<std::uint32_t> events = parlot::bench::recorded_events(argv[i]);
    if (events.empty()) continue;
    for (const unsigned version : {4u, unsigned{parlot::format::kVersion}}) {
      const Result r = measure(events, version);
      std::printf("| %s | %u | %zu | %llu | %.1f | %llu | %.3f |\n", argv[i], version,
                  events.size(), static_cast<unsigned long long>(r.decisions),
                  static_cast<double>(events.size()) / static_cast<double>(r.decisions),
                  static_cast<unsigned long long>(r.bytes), r.ns_per_event);
    }
  }
  return 0;
}
