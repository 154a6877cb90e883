// Codec and reader throughput in events/s (items/s).
//  - synthetic streams: a call-dense loop and random call trees;
//  - PARLOT_BENCH_TRACE=<thread .trace file>: a recorded trace, decoded
//    through the reader library exactly as parlot-read does.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <vector>

#include "codec/decoder.h"
#include "parlot/codec.h"
#include "parlot/trace_reader.h"

namespace {

using parlot::codec::OutputWindow;

struct DiscardSink {
  std::vector<std::uint8_t> window = std::vector<std::uint8_t>(256 * 1024);
  std::size_t bytes = 0;
  OutputWindow fresh() { return {window.data(), window.data() + window.size()}; }
  void drain(OutputWindow& w) {
    bytes += static_cast<std::size_t>(w.cur - window.data());
    w = fresh();
  }
};

struct CollectSink {
  std::vector<std::uint8_t> out;
  std::vector<std::uint8_t> window = std::vector<std::uint8_t>(256 * 1024);
  OutputWindow fresh() { return {window.data(), window.data() + window.size()}; }
  void drain(OutputWindow& w) {
    out.insert(out.end(), window.data(), w.cur);
    w = fresh();
  }
};

std::vector<std::uint32_t> loop_stream(std::size_t n) {
  std::vector<std::uint32_t> v{1};
  while (v.size() < n) {
    for (const std::uint32_t x : {2u, 3u, 4u, 0u, 0u, 0u, 5u, 0u}) v.push_back(x);
  }
  return v;
}

std::vector<std::uint32_t> random_tree_stream(std::size_t n) {
  std::mt19937 rng(42);
  std::vector<std::uint32_t> v;
  std::size_t depth = 0;
  while (v.size() < n) {
    if (depth != 0 && rng() % 2) {
      v.push_back(0);
      --depth;
    } else {
      v.push_back(1 + rng() % 200);
      ++depth;
    }
  }
  return v;
}

const std::vector<std::uint32_t>& stream(int which) {
  static const auto loop = loop_stream(1 << 22);
  static const auto tree = random_tree_stream(1 << 22);
  return which == 0 ? loop : tree;
}

void BM_Encode(benchmark::State& state) {
  const auto& events = stream(static_cast<int>(state.range(0)));
  DiscardSink sink;
  for (auto _ : state) {
    parlot::codec::Encoder enc(sink, sink.fresh());
    for (const auto v : events) enc.encode(v);
    enc.finish();
    benchmark::DoNotOptimize(enc.window().cur);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(events.size()));
  state.SetLabel(state.range(0) == 0 ? "call-dense loop" : "random call tree");
}
BENCHMARK(BM_Encode)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_Decode(benchmark::State& state) {
  const auto& events = stream(static_cast<int>(state.range(0)));
  CollectSink sink;
  parlot::codec::Encoder enc(sink, sink.fresh());
  for (const auto v : events) enc.encode(v);
  enc.finish();
  sink.drain(enc.window());
  std::vector<std::uint32_t> out(1 << 16);
  for (auto _ : state) {
    parlot::codec::Decoder d(true);
    d.feed(sink.out.data(), sink.out.size());
    std::size_t total = 0;
    while (total < events.size()) {
      const std::size_t n = d.next(out.data(), std::min(out.size(), events.size() - total));
      if (n == 0) break;
      total += n;
    }
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(events.size()));
  state.SetLabel(state.range(0) == 0 ? "call-dense loop" : "random call tree");
  state.counters["ratio"] =
      static_cast<double>(events.size() * 2) / static_cast<double>(sink.out.size());
}
BENCHMARK(BM_Decode)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Resetting a codec-2 decoder between streams, as the reader's workers do
// for every thread: after a stream of 0 events (the fixed part of the
// reset) and after one of 30,000 events of a call loop (the part a
// short stream used; time per iteration = one reset and one decode).
void BM_DecoderReset(benchmark::State& state) {
  const auto events = static_cast<std::size_t>(state.range(0));
  std::vector<std::uint8_t> bytes;
  std::size_t block = 0;
  std::vector<std::uint32_t> out(65536);
  if (events != 0) {
    CollectSink sink;
    parlot::codec::v2::Encoder enc(sink, sink.fresh());
    for (const auto v : loop_stream(events)) enc.encode(v);
    enc.finish();
    sink.drain(enc.window());
    bytes = sink.out;
    block = bytes.size();
  }
  parlot::codec::Decoder d(parlot::format::Codec::kLzRank);
  for (auto _ : state) {
    d.reset();
    if (block != 0) {
      d.feed(bytes.data(), block);
      while (d.next(out.data(), out.size()) != 0) {
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(events == 0 ? "reset only" : "reset + decode of a 30,000-event loop");
}
BENCHMARK(BM_DecoderReset)->Arg(0)->Arg(30000)->Unit(benchmark::kMicrosecond);

// A recorded thread trace through ThreadEventReader (file I/O included).
void BM_ReadRecordedTrace(benchmark::State& state) {
  const char* path = std::getenv("PARLOT_BENCH_TRACE");
  if (path == nullptr) {
    state.SkipWithError("set PARLOT_BENCH_TRACE to a thread-*.trace file");
    return;
  }
  std::uint64_t events = 0;
  for (auto _ : state) {
    parlot::ThreadEventReader reader(path);
    std::uint64_t sum = 0;
    for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) sum += b.size();
    events = sum;
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(events));
}
BENCHMARK(BM_ReadRecordedTrace)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
