// Byte-exact round trips of the event codecs (include/parlot/codec.h, codec
// 0, 1 and 2) over random, periodic and adversarial streams, and their
// malformed-input paths. Codec 2's own cases are in codec_v2_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "codec/decoder.h"
#include "codec_test_support.h"
#include "parlot/codec.h"

namespace {

using parlot::codec::Decoder;
using parlot::codec::OutputWindow;
using parlot::codec_test::encode_with;
using parlot::codec_test::random_calls;
using parlot::codec_test::VectorSink;
using parlot::format::Codec;

std::vector<std::uint8_t> encode(const std::vector<std::uint32_t>& events, Codec c) {
  switch (c) {
    case Codec::kRawWords:
      return encode_with<parlot::codec::RawEncoder>(events, 64);
    case Codec::kLzZe:
      return encode_with<parlot::codec::Encoder>(events, 64);
    case Codec::kLzRank:
      break;
  }
  return encode_with<parlot::codec::v2::Encoder>(events, 512);
}
std::vector<std::uint8_t> encode(const std::vector<std::uint32_t>& events, bool lz) {
  return encode(events, lz ? Codec::kLzZe : Codec::kRawWords);
}

// Decodes `count` events, feeding the bytes in pieces cut at group
// boundaries is not required by the API, so feed it whole but pull in small
// batches to exercise resumption inside matches.
std::vector<std::uint32_t> decode(const std::vector<std::uint8_t>& bytes, std::size_t count,
                                  Codec c, std::size_t batch = 7) {
  Decoder d(c);
  d.feed(bytes.data(), bytes.size());
  std::vector<std::uint32_t> out;
  std::vector<std::uint32_t> buf(batch);
  while (out.size() < count) {
    const std::size_t want = std::min(batch, count - out.size());
    const std::size_t n = d.next(buf.data(), want);
    EXPECT_NE(d.status(), Decoder::Status::kError) << d.error();
    if (n == 0) break;
    out.insert(out.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return out;
}

void expect_round_trip(const std::vector<std::uint32_t>& events) {
  for (const Codec c : {Codec::kLzZe, Codec::kRawWords, Codec::kLzRank}) {
    const auto bytes = encode(events, c);
    const auto back = decode(bytes, events.size(), c, 1 + events.size() % 97);
    ASSERT_EQ(back.size(), events.size()) << "codec " << static_cast<int>(c);
    EXPECT_TRUE(back == events) << "codec " << static_cast<int>(c) << " stream differs";
  }
}

TEST(Codec, EmptyStream) {
  expect_round_trip({});
  EXPECT_TRUE(encode({}, true).empty());
  EXPECT_TRUE(encode({}, Codec::kLzRank).empty());
}

TEST(Codec, SingleEvents) {
  for (const std::uint32_t v : {0u, 1u, 0x7fffu, 0x8000u, 0xffffu, 0x10000u, 0x7fffffffu}) {
    expect_round_trip({v});
  }
}

TEST(Codec, RandomUniformValues) {
  std::mt19937 rng(1);
  std::vector<std::uint32_t> v(200000);
  for (auto& x : v) x = rng() & 0x7fffffff;
  expect_round_trip(v);
}

TEST(Codec, RandomCallStreams) {
  for (std::uint32_t seed = 0; seed < 5; ++seed) {
    expect_round_trip(random_calls(100000, 3 + seed * 50, seed));
  }
}

TEST(Codec, PeriodicLoopCompressesFarBelowRawSize) {
  // main { loop { a { b } c } }: a period of 6 events repeated.
  std::vector<std::uint32_t> v{1};
  for (int i = 0; i < 1000000; ++i) {
    for (const std::uint32_t x : {2u, 3u, 0u, 0u, 4u, 0u}) v.push_back(x);
  }
  v.push_back(0);
  expect_round_trip(v);
  const auto bytes = encode(v, true);
  const double ratio = static_cast<double>(v.size() * 2) / static_cast<double>(bytes.size());
  // One 2-byte length word (+ ZE bitmap) per 65535 matched events.
  EXPECT_GT(ratio, 10000.0) << bytes.size() << " bytes";
}

TEST(Codec, LongMatchesCrossTheMaximumLength) {
  // Exactly kMaxMatch, kMaxMatch +- 1 and multiples, then a mismatch.
  for (const std::size_t n : {65534u, 65535u, 65536u, 131070u, 131071u, 200000u}) {
    std::vector<std::uint32_t> v;
    for (std::size_t i = 0; i < 8 + n; ++i) v.push_back(i % 2 ? 0 : 5);
    v.push_back(9);
    v.push_back(0);
    expect_round_trip(v);
  }
}

TEST(Codec, HistoryWindowWraps) {
  // A 70,000-event unique prefix repeated: the repeat's source lies beyond the
  // 64K window, so predictions read overwritten slots on both sides.
  std::vector<std::uint32_t> block;
  for (std::uint32_t i = 0; i < 70000; ++i) block.push_back(1 + (i * 2654435761u) % 40000);
  std::vector<std::uint32_t> v;
  for (int r = 0; r < 4; ++r) v.insert(v.end(), block.begin(), block.end());
  // And a period of exactly the window size.
  for (std::uint32_t i = 0; i < 3 * 65536; ++i) v.push_back(1 + i % 65536 % 1000);
  expect_round_trip(v);
}

TEST(Codec, HashCollisionsBetweenContexts) {
  // Many distinct 3-event contexts (far more than 4096 table entries) with
  // different successors: predictions are often wrong and get overwritten.
  std::mt19937 rng(7);
  std::vector<std::uint32_t> v;
  for (int i = 0; i < 300000; ++i) {
    v.push_back(1 + rng() % 20);
    if (rng() % 4 == 0) v.push_back(0);
  }
  expect_round_trip(v);
}

TEST(Codec, FunctionIdsBeyond65535) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t i = 1; i <= 140000; ++i) {
    v.push_back(i);
    v.push_back(0);
  }
  for (std::uint32_t i = 1; i <= 140000; i += 3) {
    v.push_back(i);
    v.push_back(0x7fffffff - i);
    v.push_back(0);
    v.push_back(0);
  }
  expect_round_trip(v);
}

TEST(Codec, MixedSmallAndLargeIdsInMatches) {
  std::vector<std::uint32_t> period{70000, 1, 0, 0x8000, 0, 0, 99999, 0};
  std::vector<std::uint32_t> v;
  for (int i = 0; i < 50000; ++i) v.insert(v.end(), period.begin(), period.end());
  expect_round_trip(v);
}

TEST(Codec, RawBytesAccounting) {
  EXPECT_EQ(parlot::codec::raw_bytes_of(0), 2u);
  EXPECT_EQ(parlot::codec::raw_bytes_of(0x7fff), 2u);
  EXPECT_EQ(parlot::codec::raw_bytes_of(0x8000), 4u);
  const std::vector<std::uint32_t> v{1, 0x9000, 0};
  EXPECT_EQ(encode(v, false).size(), 8u);  // raw words: 2 + 4 + 2
}

TEST(Codec, ZeroEliminationLayout) {
  // Literal 3 after a no-match length 0: words 0,3 -> bytes 00 00 03 00,
  // padded to a group of 8 with zeros: bitmap 0b00000100, then 03.
  const auto bytes = encode({3}, true);
  EXPECT_THAT(bytes, ::testing::ElementsAre(0x04, 0x03));
}

TEST(Codec, TruncatedGroupIsAnError) {
  const auto bytes = encode(random_calls(1000, 50, 3), true);
  ASSERT_GT(bytes.size(), 4u);
  // Cut in the middle of a group: the bitmap promises more bytes.
  std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + 2);
  cut[0] = 0xff;
  Decoder d(true);
  d.feed(cut.data(), cut.size());
  std::uint32_t out[16];
  d.next(out, 16);
  EXPECT_EQ(d.status(), Decoder::Status::kError);
  EXPECT_EQ(d.error_offset(), 0u);
}

TEST(Codec, OddRawBlockIsAnError) {
  const std::uint8_t bytes[3] = {1, 0, 2};
  Decoder d(false);
  d.feed(bytes, 3);
  std::uint32_t out[4];
  EXPECT_EQ(d.next(out, 4), 1u);
  EXPECT_EQ(d.status(), Decoder::Status::kError);
}

TEST(Codec, ArbitraryBytesNeverCrashTheDecoder) {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::uint8_t> junk(1 + rng() % 4096);
    for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
    for (const Codec c : {Codec::kLzZe, Codec::kRawWords, Codec::kLzRank}) {
      Decoder d(c);
      d.feed(junk.data(), junk.size());
      std::vector<std::uint32_t> out(1024);
      std::size_t total = 0;
      for (int i = 0; i < 256; ++i) {  // at most 256 Ki events per input
        const std::size_t n = d.next(out.data(), out.size());
        total += n;
        if (n == 0 || d.status() != Decoder::Status::kOk) break;
      }
      // Each input byte yields a bounded number of events (codec 1: at most
      // 4 words per byte, at most 65535 events per word; codec 2: a segment
      // header promises at most 2^32 events).
      EXPECT_LE(total, std::min<std::size_t>(junk.size() * 4 * 65535, 256 * 1024));
    }
  }
}

}  // namespace
