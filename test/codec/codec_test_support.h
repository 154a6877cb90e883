// Helpers shared by the codec tests: an encoder sink with a small window and
// generators of event streams.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "parlot/codec.h"

namespace parlot::codec_test {

/// Encoder sink collecting the output into `bytes` through a window of
/// `window_bytes`, so window refills (drain) happen often; `blocks` holds
/// the size of each non-empty drained window (one data block each).
struct VectorSink {
  explicit VectorSink(std::size_t window_bytes) : window(window_bytes) {}
  std::vector<std::uint8_t> bytes;
  std::vector<std::size_t> blocks;
  std::vector<std::uint8_t> window;
  std::size_t drains = 0;
  codec::OutputWindow fresh() { return {window.data(), window.data() + window.size()}; }
  void drain(codec::OutputWindow& w) {
    const auto n = static_cast<std::size_t>(w.cur - window.data());
    bytes.insert(bytes.end(), window.data(), w.cur);
    if (n != 0) blocks.push_back(n);
    w = fresh();
    ++drains;
  }
};

/// Encodes `events` with encoder type `Enc` (over VectorSink) through a
/// `window_bytes` window; returns the bytes (all blocks back to back).
template <class Enc>
std::vector<std::uint8_t> encode_with(const std::vector<std::uint32_t>& events,
                                      std::size_t window_bytes,
                                      std::vector<std::size_t>* blocks = nullptr) {
  VectorSink sink(window_bytes);
  Enc enc(sink, sink.fresh());
  for (const auto v : events) enc.encode(v);
  enc.finish();
  sink.drain(enc.window());
  if (blocks != nullptr) *blocks = sink.blocks;
  return sink.bytes;
}

/// A well-nested call stream: a random walk of `n` enters (IDs 1..ids) and
/// exits.
inline std::vector<std::uint32_t> random_calls(std::size_t n, std::uint32_t ids,
                                               std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint32_t> out;
  std::size_t depth = 0;
  while (out.size() < n) {
    if (depth != 0 && rng() % 2 == 0) {
      out.push_back(0);
      --depth;
    } else {
      out.push_back(1 + rng() % ids);
      ++depth;
    }
  }
  return out;
}

}  // namespace parlot::codec_test
