// Helpers shared by the codec tests: an encoder sink with a small window,
// encoding and decoding helpers, and generators of event streams.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "codec/decoder.h"
#include "parlot/codec.h"
#include "parlot/format.h"

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

// Decodes a stream block by block (each block one feed, as the reader
// does), pulling `batch` events at a time, at most `count` events.
inline std::vector<std::uint32_t> decode_blocks(const std::vector<std::uint8_t>& bytes,
                                                const std::vector<std::size_t>& blocks,
                                                std::size_t count, std::size_t batch,
                                                unsigned format_version = format::kVersion) {
  codec::Decoder d(format::Codec::kLzRank);
  d.set_format_version(format_version);
  std::vector<std::uint32_t> out;
  std::vector<std::uint32_t> buf(batch);
  std::size_t block = 0;
  std::size_t off = 0;
  while (out.size() < count) {
    const std::size_t n = d.next(buf.data(), std::min(batch, count - out.size()));
    EXPECT_NE(d.status(), codec::Decoder::Status::kError)
        << d.error() << " at " << d.error_offset();
    if (d.status() == codec::Decoder::Status::kError) break;
    out.insert(out.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
    if (n == 0) {
      if (block == blocks.size()) break;
      d.feed(bytes.data() + off, blocks[block]);
      off += blocks[block++];
    }
  }
  EXPECT_TRUE(d.at_token_boundary());
  return out;
}

// An encoder writing format version `version` (its model parts,
// ModelRef::set_format_version) into `sink`.
struct VersionEncoder : codec::v2::Encoder {
  VersionEncoder(VectorSink& sink, unsigned version)
      : codec::v2::Encoder(sink, sink.fresh(), version) {}
};

// `events` encoded as format version `version` writes them through a
// `window_bytes` window (blocks' sizes in `blocks`).
inline std::vector<std::uint8_t> encode_as_version(const std::vector<std::uint32_t>& events,
                                                   unsigned version, std::size_t window_bytes,
                                                   std::vector<std::size_t>* blocks = nullptr) {
  VectorSink sink(window_bytes);
  VersionEncoder enc(sink, version);
  for (const auto v : events) enc.encode(v);
  enc.finish();
  sink.drain(enc.window());
  if (blocks != nullptr) *blocks = sink.blocks;
  return sink.bytes;
}

// Events of a simulated quicksort on random keys: recursion shape and the
// calls inside partition depend on the data, the call structure does not.
inline std::vector<std::uint32_t> quicksort_calls(std::size_t keys, std::uint32_t seed) {
  enum : std::uint32_t { kSort = 1, kPartition, kLess, kSwap, kPivot };
  std::mt19937 rng(seed);
  std::vector<std::uint32_t> a(keys);
  for (auto& x : a) x = rng();
  std::vector<std::uint32_t> ev;
  auto call = [&ev](std::uint32_t f) {
    ev.push_back(f);
    ev.push_back(0);
  };
  auto sort = [&](auto& self, std::ptrdiff_t lo, std::ptrdiff_t hi) -> void {
    ev.push_back(kSort);
    if (lo < hi) {
      ev.push_back(kPartition);
      call(kPivot);
      const std::uint32_t p = a[static_cast<std::size_t>(hi)];
      std::ptrdiff_t i = lo;
      for (std::ptrdiff_t j = lo; j < hi; ++j) {
        call(kLess);
        if (a[static_cast<std::size_t>(j)] < p) {
          call(kSwap);
          std::swap(a[static_cast<std::size_t>(i++)], a[static_cast<std::size_t>(j)]);
        }
      }
      call(kSwap);
      std::swap(a[static_cast<std::size_t>(i)], a[static_cast<std::size_t>(hi)]);
      ev.push_back(0);
      self(self, lo, i - 1);
      self(self, i + 1, hi);
    }
    ev.push_back(0);
  };
  sort(sort, 0, static_cast<std::ptrdiff_t>(keys) - 1);
  return ev;
}

}  // namespace parlot::codec_test
