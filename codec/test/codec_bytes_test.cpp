// Codec 2's bytes are those of the released encoders of each format
// version (FNV-1a 64 of fixed streams' output): a change to the codec that
// changes one byte fails here.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "codec_test_support.h"
#include "parlot/codec.h"

namespace {

using parlot::codec_test::decode_blocks;
using parlot::codec_test::encode_as_version;
using parlot::codec_test::encode_with;
using parlot::codec_test::quicksort_calls;
using parlot::codec_test::random_calls;
using parlot::codec_test::VectorSink;
using parlot::codec_test::VersionEncoder;
namespace v2 = parlot::codec::v2;
using V2Encoder = v2::Encoder;

std::uint64_t fnv_of(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const std::uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

// Length model 1's bytes are those of the first codec-2 encoder (format
// version 2 as released): FNV-1a 64 of the output for two fixed streams,
// computed with that encoder. A faster encoder or walk must not change one
// byte, and format version 2 files must still decode.
TEST(CodecV2, BytesAreThoseOfTheReleasedEncoder) {
  const auto sorted = encode_as_version(quicksort_calls(3000, 5), 2, 512);
  EXPECT_EQ(sorted.size(), 9587u);
  EXPECT_EQ(fnv_of(sorted), 0xc7180c8ebea5f423ull);
  const auto random = encode_as_version(random_calls(100000, 300, 3), 2, 512);
  EXPECT_EQ(random.size(), 83246u);
  EXPECT_EQ(fnv_of(random), 0xbe95e0b6d36fb5e5ull);
}

// The same for length model 2, as format version 3 released it.
TEST(CodecV2, BytesOfLengthModel2AreThoseOfFormatVersion3) {
  const auto sorted = encode_as_version(quicksort_calls(3000, 5), 3, 512);
  EXPECT_EQ(sorted.size(), 8844u);
  EXPECT_EQ(fnv_of(sorted), 0x4686bc3b006fad86ull);
  const auto random = encode_as_version(random_calls(100000, 300, 3), 3, 512);
  EXPECT_EQ(random.size(), 83303u);
  EXPECT_EQ(fnv_of(random), 0xc57493954288839bull);
}

// The same for format version 4 (the table tail), as this encoder first
// wrote them. The quicksort's bytes differ from version 3's (its long
// matches that do not repeat themselves leave other table entries);
// random_calls' are the same. Decoded in batches of 1, 3 and 4093 events
// (a match's first event, its copied ones and its closing catch-up fall in
// different next() calls).
TEST(CodecV2, BytesOfFormatVersion4) {
  const auto events = quicksort_calls(3000, 5);
  std::vector<std::size_t> blocks;
  const auto sorted = encode_as_version(events, 4, 512, &blocks);
  EXPECT_EQ(sorted.size(), 8847u);
  EXPECT_EQ(fnv_of(sorted), 0x2e3380a781fd2285ull);
  EXPECT_FALSE(sorted == encode_as_version(events, 3, 512));
  for (const std::size_t batch : {1u, 3u, 4093u}) {
    EXPECT_TRUE(decode_blocks(sorted, blocks, events.size(), batch, 4) == events) << batch;
  }
  const auto random = encode_as_version(random_calls(100000, 300, 3), 4, 512);
  EXPECT_EQ(random.size(), 83303u);
  EXPECT_EQ(fnv_of(random), 0xc57493954288839bull);
}

// Format version 5 (the long context): its bytes, pinned as the format
// released them; fewer than version 4's on the same quicksort calls, and
// decoded in batches that cut matches anywhere.
TEST(CodecV2, BytesOfFormatVersion5) {
  const auto events = quicksort_calls(3000, 5);
  std::vector<std::size_t> blocks;
  const auto sorted = encode_with<V2Encoder>(events, 512, &blocks);
  EXPECT_EQ(sorted.size(), 8820u);
  EXPECT_EQ(fnv_of(sorted), 0x383b985ae1e2cabdull);
  EXPECT_LT(sorted.size(), encode_as_version(events, 4, 512).size());
  for (const std::size_t batch : {1u, 3u, 4093u}) {
    EXPECT_TRUE(decode_blocks(sorted, blocks, events.size(), batch) == events) << batch;
  }
  const auto random = encode_with<V2Encoder>(random_calls(100000, 300, 3), 512);
  EXPECT_EQ(random.size(), 83334u);
  EXPECT_EQ(fnv_of(random), 0xf8b3f7f50a8a3664ull);
}

// A loop of 3 nested calls (6 events) where every `gap`-th iteration
// (gap drawn from [1, max_gap]) calls one of 5 other functions instead.
std::vector<std::uint32_t> loop_with_detours(std::size_t iterations, std::uint32_t max_gap,
                                             std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint32_t> ev;
  std::size_t next_detour = 1 + rng() % max_gap;
  for (std::size_t i = 0; i < iterations; ++i) {
    const std::uint32_t leaf = i == next_detour ? 4 + rng() % 5 : 3;
    if (i == next_detour) next_detour = i + 1 + rng() % max_gap;
    for (const std::uint32_t v : {1u, 2u, leaf, 0u, 0u, 0u}) ev.push_back(v);
  }
  return ev;
}

// Length model 2's bytes on long matches, as format version 3 released
// them (values from the encoder of commit a6cfd0c): matches of every length
// up to thousands of events, time-driven flushes inside matches, and one
// match cut at kMaxMatch. An encoder that moves the match path's work (the
// LZ table's updates) elsewhere must keep them.
TEST(CodecV2, BytesOfLongMatchesAreThoseOfFormatVersion3) {
  const auto detours = loop_with_detours(400000, 600, 11);
  VectorSink sink(4096);
  {
    VersionEncoder enc(sink, 3);
    for (std::size_t i = 0; i < detours.size(); ++i) {
      enc.encode(detours[i]);
      if (i % 100003 == 100002) enc.flush();  // the idle flusher, mid-match
    }
    enc.finish();
    sink.drain(enc.window());
  }
  EXPECT_EQ(sink.bytes.size(), 3631u);
  EXPECT_EQ(fnv_of(sink.bytes), 3060521766928790855ull);
  EXPECT_TRUE(decode_blocks(sink.bytes, sink.blocks, detours.size(), 4093, 3) == detours);

  // 17 M events of the plain loop: one match longer than kMaxMatch.
  VectorSink long_sink(4096);
  VersionEncoder enc(long_sink, 3);
  const std::uint64_t events = std::uint64_t{v2::kMaxMatch} + 300001;
  for (std::uint64_t i = 0; i < events; ++i) {
    static constexpr std::uint32_t kLoop[6] = {1, 2, 3, 0, 0, 0};
    enc.encode(kLoop[i % 6]);
  }
  enc.finish();
  long_sink.drain(enc.window());
  EXPECT_EQ(long_sink.bytes.size(), 21u);
  EXPECT_EQ(fnv_of(long_sink.bytes), 9379394714775903593ull);
}

}  // namespace
