// Codec 2 (include/parlot/codec_v2.h): round trips block by block and across
// segment cuts, its ratio against codec 1, and malformed input.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "codec_test_support.h"
#include "parlot/codec.h"

namespace {

using parlot::codec::Decoder;
using parlot::codec_test::encode_with;
using parlot::codec_test::random_calls;
using parlot::codec_test::VectorSink;
using parlot::format::Codec;
namespace v2 = parlot::codec::v2;

using V2Encoder = v2::Encoder<VectorSink>;

// Decodes a stream block by block (each block one feed, as the reader
// does), pulling `batch` events at a time, at most `count` events.
std::vector<std::uint32_t> decode_blocks(const std::vector<std::uint8_t>& bytes,
                                         const std::vector<std::size_t>& blocks, std::size_t count,
                                         std::size_t batch,
                                         unsigned format_version = parlot::format::kVersion) {
  Decoder d(Codec::kLzRank);
  d.set_format_version(format_version);
  std::vector<std::uint32_t> out;
  std::vector<std::uint32_t> buf(batch);
  std::size_t block = 0;
  std::size_t off = 0;
  while (out.size() < count) {
    const std::size_t n = d.next(buf.data(), std::min(batch, count - out.size()));
    EXPECT_NE(d.status(), Decoder::Status::kError) << d.error() << " at " << d.error_offset();
    if (d.status() == Decoder::Status::kError) break;
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
// Model::set_format_version) into `sink`.
struct VersionEncoder : V2Encoder {
  VersionEncoder(VectorSink& sink, unsigned version) : V2Encoder(sink, sink.fresh(), version) {}
};

// `events` encoded as format version `version` writes them through a
// `window_bytes` window (blocks' sizes in `blocks`).
std::vector<std::uint8_t> encode_as_version(const std::vector<std::uint32_t>& events,
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
std::vector<std::uint32_t> quicksort_calls(std::size_t keys, std::uint32_t seed) {
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

TEST(CodecV2, RoundTripBlockByBlock) {
  for (std::uint32_t seed = 0; seed < 4; ++seed) {
    const auto events = random_calls(200000, 5 + seed * 300, seed);
    std::vector<std::size_t> blocks;
    const auto bytes = encode_with<V2Encoder>(events, 512, &blocks);
    ASSERT_GT(blocks.size(), 10u);  // many segments
    for (const std::size_t batch : {1u, 7u, 65536u}) {
      EXPECT_TRUE(decode_blocks(bytes, blocks, events.size(), batch) == events)
          << "seed " << seed << " batch " << batch;
    }
  }
}

TEST(CodecV2, SegmentHeaderCountsItsEvents) {
  const auto events = random_calls(50000, 40, 9);
  std::vector<std::size_t> blocks;
  const auto bytes = encode_with<V2Encoder>(events, 4096, &blocks);
  std::size_t off = 0;
  std::uint64_t total = 0;
  for (const std::size_t b : blocks) {
    ASSERT_GE(b, v2::kSegmentHeaderBytes + 5);
    const std::uint32_t n = bytes[off] | bytes[off + 1] << 8 | bytes[off + 2] << 16 |
                            static_cast<std::uint32_t>(bytes[off + 3]) << 24;
    EXPECT_GT(n, 0u);
    total += n;
    off += b;
  }
  EXPECT_EQ(total, events.size());
}

// A sink whose owner flushes the encoder every `every` events (a
// time-driven flush in the runtime): segments end inside matches.
TEST(CodecV2, FlushInsideMatchesAndEmptyFlushes) {
  std::vector<std::uint32_t> events;
  for (int i = 0; i < 20000; ++i) {
    for (const std::uint32_t x : {2u, 3u, 0u, 0u, 4u, 0u}) events.push_back(x);
    if (i % 777 == 0) {
      events.push_back(5 + static_cast<std::uint32_t>(i % 13));
      events.push_back(0);
    }
  }
  for (const std::size_t every : {1u, 2u, 5u, 1000u, 4099u}) {
    VectorSink sink(1024);
    V2Encoder enc(sink, sink.fresh());
    for (std::size_t i = 0; i < events.size(); ++i) {
      enc.encode(events[i]);
      if (i % every == 0) {
        enc.flush();
        enc.flush();  // nothing new: no empty segment
      }
    }
    enc.finish();
    sink.drain(enc.window());
    EXPECT_TRUE(decode_blocks(sink.bytes, sink.blocks, events.size(), 33) == events)
        << "flush every " << every;
  }
}

TEST(CodecV2, MatchesCrossTheMaximumLength) {
  for (const std::size_t n : {std::size_t{v2::kMaxMatch} - 1, std::size_t{v2::kMaxMatch} + 1,
                              2 * std::size_t{v2::kMaxMatch} + 3}) {
    std::vector<std::uint32_t> v;
    v.reserve(n + 16);
    for (std::size_t i = 0; i < 8 + n; ++i) v.push_back(i % 2 ? 0 : 5);
    v.push_back(9);
    v.push_back(0);
    std::vector<std::size_t> blocks;
    const auto bytes = encode_with<V2Encoder>(v, 4096, &blocks);
    EXPECT_TRUE(decode_blocks(bytes, blocks, v.size(), 1 << 16) == v) << n;
    EXPECT_LT(bytes.size(), 200u) << n;
  }
}

TEST(CodecV2, NoWorseThanCodec1OnAPeriodicLoop) {
  std::vector<std::uint32_t> v{1};
  for (int i = 0; i < 1000000; ++i) {
    for (const std::uint32_t x : {2u, 3u, 0u, 0u, 4u, 0u}) v.push_back(x);
  }
  v.push_back(0);
  const auto one = encode_with<parlot::codec::Encoder<VectorSink>>(v, 4096);
  const auto two = encode_with<V2Encoder>(v, 4096);
  EXPECT_LE(two.size(), one.size());
}

TEST(CodecV2, RanksLiteralsOfDataDependentCallsFarBelowCodec1) {
  const auto v = quicksort_calls(200000, 3);
  std::vector<std::size_t> blocks;
  const auto two = encode_with<V2Encoder>(v, 1 << 18, &blocks);
  const auto one = encode_with<parlot::codec::Encoder<VectorSink>>(v, 1 << 18);
  EXPECT_TRUE(decode_blocks(two, blocks, v.size(), 4096) == v);
  // The literals are (pivot, less, swap, exit) after a known caller and
  // sibling: a rank of a few candidates, not a 16-bit word.
  EXPECT_LT(two.size() * 2, one.size()) << "codec 1 " << one.size() << ", codec 2 " << two.size();
}

TEST(CodecV2, LargeAndNewIdsRoundTrip) {
  std::vector<std::uint32_t> v;
  std::mt19937 rng(5);
  for (std::uint32_t i = 1; i <= 100000; ++i) {
    v.push_back(i * 3);  // new IDs with gaps
    v.push_back(0);
    v.push_back(1 + rng() % (i * 3));  // an old one
    v.push_back(0);
  }
  v.push_back(parlot::codec::kMaxValue);
  v.push_back(0);
  v.push_back(parlot::codec::kMaxValue - 1);
  v.push_back(0);
  std::vector<std::size_t> blocks;
  const auto bytes = encode_with<V2Encoder>(v, 2048, &blocks);
  EXPECT_TRUE(decode_blocks(bytes, blocks, v.size(), 100) == v);
}

TEST(CodecV2, CutSegmentIsAnErrorInsideTheInput) {
  const auto events = random_calls(5000, 300, 4);
  std::vector<std::size_t> blocks;
  const auto bytes = encode_with<V2Encoder>(events, 1 << 16, &blocks);
  ASSERT_EQ(blocks.size(), 1u);
  for (const std::size_t keep :
       {std::size_t{3}, std::size_t{8}, bytes.size() / 2, bytes.size() - 1}) {
    Decoder d(Codec::kLzRank);
    d.feed(bytes.data(), keep);
    std::vector<std::uint32_t> out(events.size());
    std::size_t total = 0;
    while (d.status() == Decoder::Status::kOk && total < out.size()) {
      total += d.next(out.data() + total, out.size() - total);
    }
    EXPECT_EQ(d.status(), Decoder::Status::kError) << keep;
    EXPECT_LE(d.error_offset(), keep);
    EXPECT_LT(total, events.size());
  }
}

TEST(CodecV2, ZeroEventSegmentIsAnError) {
  const std::uint8_t bytes[12] = {0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7};
  Decoder d(Codec::kLzRank);
  d.feed(bytes, sizeof bytes);
  std::uint32_t out[8];
  EXPECT_EQ(d.next(out, 8), 0u);
  EXPECT_EQ(d.status(), Decoder::Status::kError);
  EXPECT_EQ(d.error_offset(), 0u);
}

TEST(CodecV2, FlippedBitsNeverCrashAndStayIn31Bits) {
  const auto events = quicksort_calls(3000, 8);
  const auto good = encode_with<V2Encoder>(events, 1 << 16);
  std::mt19937 rng(12);
  for (int round = 0; round < 300; ++round) {
    auto bytes = good;
    for (int k = 0; k < 1 + round % 4; ++k) {
      bytes[rng() % bytes.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    }
    Decoder d(Codec::kLzRank);
    d.feed(bytes.data(), bytes.size());
    std::vector<std::uint32_t> out(4096);
    for (int i = 0; i < 64; ++i) {
      const std::size_t n = d.next(out.data(), out.size());
      for (std::size_t j = 0; j < n; ++j) ASSERT_LE(out[j], parlot::codec::kMaxValue);
      if (n == 0 || d.status() != Decoder::Status::kOk) break;
    }
    if (d.status() == Decoder::Status::kError) {
      EXPECT_LE(d.error_offset(), bytes.size());
    }
  }
}

}  // namespace

namespace structure {

// The structural walk as docs/FORMAT.md states it (and as the first codec-2
// encoder wrote it): back at most 64 events, an exit deepens, an entry at
// depth 0 is the caller, the entry that brings the depth back to 0 first
// is the previous sibling; unfound parts 0xffffffff.
std::uint32_t reference_context_slot(const parlot::codec::LzModel& lz) {
  const std::uint32_t pos = lz.position();
  const std::uint32_t n = pos < v2::kWalkLimit ? pos : v2::kWalkLimit;
  std::uint32_t sibling = 0xffffffffu;
  std::uint32_t caller = 0xffffffffu;
  std::uint32_t depth = 0;
  bool sibling_known = false;
  for (std::uint32_t k = 1; k <= n; ++k) {
    const std::uint32_t v = lz.at(pos - k);
    if (v == 0) {
      ++depth;
      continue;
    }
    if (depth == 0) {
      caller = v;
      if (!sibling_known) sibling = 0;
      break;
    }
    if (--depth == 0 && !sibling_known) {
      sibling = v;
      sibling_known = true;
    }
  }
  const std::uint32_t x = caller * 0x9e3779b1u ^ sibling * 0x85ebca77u;
  return (x ^ (x >> 15)) * 0x2c1b3c6du >> (32 - v2::kCandidateBits);
}

}  // namespace structure

// RankModel::context_slot (the exit-mask walk) and walk_slot find the
// context the reference walk finds, at every position of balanced,
// unbalanced (exits at depth 0) and deep streams, with IDs up to kMaxValue,
// across the history ring's wrap: a faster walk must pass this unchanged.
TEST(CodecV2, ContextWalkMatchesTheReferenceWalk) {
  std::vector<std::vector<std::uint32_t>> streams = {
      random_calls(30000, 7, 1), random_calls(30000, 300, 2), quicksort_calls(2000, 3)};
  std::mt19937 rng(4);
  std::vector<std::uint32_t> odd;  // exits without entries, runs of either
  for (int i = 0; i < 30000; ++i) {
    const unsigned r = rng() % 16;
    odd.push_back(r < 7 ? 0 : r == 15 ? parlot::codec::kMaxValue - rng() % 3 : r);
  }
  streams.push_back(odd);
  std::vector<std::uint32_t> deep;  // 100 levels down and up, twice
  for (int rep = 0; rep < 2; ++rep) {
    for (std::uint32_t d = 1; d <= 100; ++d) deep.push_back(d);
    for (int d = 0; d < 100; ++d) deep.push_back(0);
  }
  streams.push_back(deep);
  // Past the history ring's end (64K events), where the last 64 events wrap.
  streams.push_back(random_calls(140000, 40, 5));
  for (std::size_t s = 0; s < streams.size(); ++s) {
    parlot::codec::LzModel lz;
    for (std::size_t i = 0; i < streams[s].size(); ++i) {
      const std::uint32_t expected = structure::reference_context_slot(lz);
      ASSERT_EQ(v2::RankModel::context_slot(lz), expected) << "stream " << s << " position " << i;
      ASSERT_EQ(v2::RankModel::walk_slot(lz), expected) << "stream " << s << " position " << i;
      lz.record(streams[s][i]);
    }
  }
}

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

// LzModel::append() then catch_up(n, period) leaves the model exactly as
// record() of each event: matches copied from `period` back (1, 2, 3, 7,
// 64, 5000 and the ring's size), long enough for catch_up to replay only
// the last period, after 1 or 2 record()ed events, on fresh and wrapped
// histories, and with period 0 (everything replayed).
TEST(LzModelCatchUp, AppendThenCatchUpIsRecord) {
  std::mt19937 rng(7);
  for (const std::uint32_t period : {1u, 2u, 3u, 7u, 64u, 5000u, 65535u}) {
    for (const std::uint32_t recorded : {1u, 2u}) {
      auto full = std::make_unique<parlot::codec::LzModel>();
      auto lazy = std::make_unique<parlot::codec::LzModel>();
      std::vector<std::uint32_t> events;
      for (int round = 0; round < 3; ++round) {
        // Arbitrary events (recorded by both), then a match copying from
        // `period` back: `recorded` record()ed, the rest append()ed.
        const std::uint32_t before = std::max(round == 1 ? 70000u : 40u, period + 3);
        for (std::uint32_t i = 0; i < before; ++i) {
          const std::uint32_t v = rng() % 5;
          events.push_back(v);
          full->record(v);
          lazy->record(v);
        }
        const std::uint32_t len = std::min<std::uint32_t>(3 * period + 11, 65535 + recorded);
        for (std::uint32_t i = 0; i < len; ++i) {
          const std::uint32_t v = events[events.size() - period];
          events.push_back(v);
          full->record(v);
          if (i < recorded) {
            lazy->record(v);
          } else {
            lazy->append(v);
          }
        }
        const std::uint32_t use = recorded + period >= 3 && period < 65536 ? period : 0;
        lazy->catch_up(len - recorded, use);
        ASSERT_TRUE(*lazy == *full)
            << "period " << period << " recorded " << recorded << " round " << round;
      }
      // Period 0: every appended event replayed.
      for (std::uint32_t i = 0; i < 1000; ++i) {
        const std::uint32_t v = rng() % 9;
        full->record(v);
        lazy->append(v);
      }
      lazy->catch_up(1000);
      EXPECT_TRUE(*lazy == *full) << "period " << period;
    }
  }
  // Catch-ups of 9 to 1000 events that start just before, at and after the
  // ring's end (the 8-event blocks of LzModel's AVX2 path stop there).
  auto full = std::make_unique<parlot::codec::LzModel>();
  auto lazy = std::make_unique<parlot::codec::LzModel>();
  constexpr std::uint32_t kRing = parlot::codec::LzModel::kHistoryMask + 1;
  for (const std::uint32_t before_end : {500u, 11u, 8u, 3u, 2u, 1u, 0u, kRing - 1, kRing - 2}) {
    for (const std::uint32_t n : {9u, 16u, 17u, 1000u}) {
      while ((full->position() + before_end) % kRing != 0) {
        const std::uint32_t v = rng() % 7;
        full->record(v);
        lazy->record(v);
      }
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t v = rng() % 7;
        full->record(v);
        lazy->append(v);
      }
      lazy->catch_up(n);
      ASSERT_TRUE(*lazy == *full) << before_end << " before the ring's end, " << n << " events";
    }
  }
}

// The long context (format version 5): after 1 2 3 4 5 6 7 and 9 9 9 4 5
// 6 8, the events 1 2 3 4 5 6 are followed by 7 (the slot whose 6 events
// before agree), not by 8 (the last slot after 4 5 6, which the 3-event
// context alone predicts); a slot that agrees no further than the 3-event
// one leaves that one's prediction.
TEST(LzModelLongContext, PredictsTheSlotWhoseContextAgreesFurther) {
  for (const bool long_context : {false, true}) {
    auto lz = std::make_unique<parlot::codec::LzModel>();
    lz->set_long_context(long_context);
    for (const std::uint32_t v :
         {1u, 2u, 3u, 4u, 5u, 6u, 7u, 9u, 9u, 9u, 4u, 5u, 6u, 8u, 1u, 2u, 3u, 4u, 5u, 6u})
      lz->record(v);
    EXPECT_EQ(lz->at(lz->predicted_slot()), long_context ? 7u : 8u) << long_context;
    // 9 9 9 4 5 6 again, after 1 2 3 4 5 6 above: its long slot (before 8)
    // agrees 6 events back, further than the 3-event context's last slot.
    for (const std::uint32_t v : {7u, 9u, 9u, 9u, 4u, 5u, 6u}) lz->record(v);
    EXPECT_EQ(lz->at(lz->predicted_slot()), long_context ? 8u : 7u) << long_context;
  }
}

// The long context's comparison gives the same answer with AVX2 and
// without, on windows anywhere in the ring (wrapping its end or not).
TEST(LzModelLongContext, AgreementIsTheSameWithAndWithoutAvx2) {
  constexpr std::uint32_t kRing = parlot::codec::LzModel::kHistoryMask + 1;
  std::vector<std::uint32_t> history(kRing);
  std::mt19937 rng(5);
  for (auto& v : history) v = rng() % 3;  // runs of agreement of every length
  for (std::uint32_t i = 0; i < 200000; ++i) {
    const std::uint32_t a = i < 40 ? kRing - 20 + i : rng();
    const std::uint32_t b = i < 40 ? i * 7 : rng();
    const unsigned scalar = parlot::codec::LzModel::agreement_in(history.data(), a, b, false);
    ASSERT_EQ(parlot::codec::LzModel::agreement_in(history.data(), a, b, true), scalar)
        << a << " " << b;
    ASSERT_LE(scalar, parlot::codec::kLongCompare);
  }
  EXPECT_EQ(parlot::codec::LzModel::agreement_in(history.data(), 100, 100, true), 8u);
}

// Matches longer than the history ring: runs of one event after a literal
// (a match from 1 back after one record()ed event, which LzModel::catch_up
// replays whole) of 200,000 events, so that try_extend stops appending at
// Encoder::kAppendMax and the encoder catches up inside the match, several
// times per match. The stream decodes, and its matches stay long.
TEST(CodecV2, MatchesLongerThanTheRingRoundTrip) {
  std::vector<std::uint32_t> events;
  for (std::uint32_t i = 0; i < 6; ++i) {
    events.push_back(2000 + i);
    events.insert(events.end(), 200000, 7);
    events.push_back(0);
  }
  VectorSink sink(4096);
  V2Encoder enc(sink, sink.fresh());
  for (const std::uint32_t v : events) enc.encode(v);
  enc.finish();
  sink.drain(enc.window());
  EXPECT_LT(sink.bytes.size(), 200u);
  EXPECT_TRUE(decode_blocks(sink.bytes, sink.blocks, events.size(), 4093) == events);
}

// The runtime counts its events with the encoder's event limit
// (ThreadTrace::put): try_extend() must fail exactly when the limit is
// reached, inside a match too, and the events that then go through
// encode() give the same bytes as without a limit.
TEST(CodecV2, EventLimitStopsTryExtendAndKeepsTheBytes) {
  std::vector<std::uint32_t> events = random_calls(300000, 40, 11);
  for (std::uint32_t i = 0; i < 3; ++i) {  // long matches: the limit falls inside them
    events.insert(events.end(), 100000, 5 + i);
    events.push_back(0);
  }
  for (const unsigned version : {3u, 4u, 5u})
    for (const std::uint32_t period : {1u, 2u, 7u, 16384u, 70000u}) {
      VectorSink plain_sink(4096);
      VersionEncoder plain(plain_sink, version);
      VectorSink limited_sink(4096);
      VersionEncoder limited(limited_sink, version);
      limited.set_event_limit(period - 1);
      std::size_t limits_reached = 0;
      std::size_t since_limit = 0;
      for (const std::uint32_t v : events) {
        plain.encode(v);
        const std::uint32_t left = limited.events_to_limit();
        if (limited.try_extend(v)) {
          ASSERT_NE(left, 0u) << "period " << period;
          ASSERT_EQ(limited.events_to_limit(), left - 1);
        } else {
          if (left == 0) {
            ASSERT_EQ(since_limit, period - 1) << "period " << period;
            ++limits_reached;
            since_limit = 0;
            limited.set_event_limit(period);
            limited.encode(v);
            continue;
          }
          limited.encode(v);
        }
        ++since_limit;
      }
      EXPECT_EQ(limits_reached, events.size() / period) << "period " << period;
      for (auto* e : {&plain, &limited}) e->finish();
      plain_sink.drain(plain.window());
      limited_sink.drain(limited.window());
      EXPECT_TRUE(plain_sink.bytes == limited_sink.bytes) << "period " << period;
      EXPECT_TRUE(decode_blocks(limited_sink.bytes, limited_sink.blocks, events.size(), 4093,
                                version) == events)
          << "version " << version << ", period " << period;
    }
}

// next_in_match() is exactly the event try_extend() takes (the runtime's
// entry hook records a predicted entry with extend_match() instead of
// try_extend()), under event limits as the runtime sets them; the bytes are
// those of plain encode().
TEST(CodecV2, NextInMatchIsTheEventTryExtendTakes) {
  std::vector<std::uint32_t> events = random_calls(200000, 30, 5);
  events.insert(events.end(), 70000, 9);  // a match that reaches an event limit
  for (const unsigned version : {3u, 4u, 5u}) {
    std::mt19937 rng(version);
    VectorSink plain_sink(4096);
    VersionEncoder plain(plain_sink, version);
    VectorSink predicted_sink(4096);
    VersionEncoder predicted(predicted_sink, version);
    predicted.set_event_limit(1000);
    std::size_t extended = 0;
    std::size_t no_match = 0;
    for (const std::uint32_t v : events) {
      plain.encode(v);
      const std::uint32_t next = predicted.next_in_match();
      if (next == VersionEncoder::kNoMatch) ++no_match;
      if (next == v) {
        predicted.extend_match(v);
        ++extended;
        continue;
      }
      // A wrong or no prediction: try_extend() must refuse it too.
      ASSERT_FALSE(predicted.try_extend(v)) << "version " << version;
      if (predicted.events_to_limit() == 0) predicted.set_event_limit(rng() % 5000);
      predicted.encode(v);
    }
    EXPECT_GT(extended, events.size() / 4) << "version " << version;  // about a third
    EXPECT_GT(no_match, 0u) << "version " << version;
    for (auto* e : {&plain, &predicted}) e->finish();
    plain_sink.drain(plain.window());
    predicted_sink.drain(predicted.window());
    EXPECT_TRUE(plain_sink.bytes == predicted_sink.bytes) << "version " << version;
  }
}

// From format version 4 on, the decision after a literal is made with it
// (Encoder::arm_next): once the stream has started, the encoder always
// predicts the next event (next_in_match() is never kNoMatch without an
// event limit or a time-driven flush), so a match's first event takes the
// fast path: every try_extend() failure codes a literal (no decision that
// only starts a match). Version 3 predicts nothing after a literal. The
// bytes are pinned by BytesOfFormatVersion4 and 5.
TEST(CodecV2, AMatchStartsOnTheFastPathAfterALiteral) {
  const auto events = quicksort_calls(3000, 5);
  for (const unsigned version : {3u, 4u, 5u}) {
    VectorSink sink(512);
    VersionEncoder enc(sink, version);
    std::size_t unpredicted = 0;  // after the first event
    std::size_t decisions = 0;
    std::size_t starts_out_of_line = 0;  // try_extend() failed, then a match opened
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (i != 0 && enc.next_in_match() == VersionEncoder::kNoMatch) ++unpredicted;
      if (enc.try_extend(events[i])) continue;
      ++decisions;
      enc.encode(events[i]);
      if (enc.pending_match() == 1) ++starts_out_of_line;
    }
    enc.finish();
    sink.drain(enc.window());
    EXPECT_TRUE(decode_blocks(sink.bytes, sink.blocks, events.size(), 4093, version) == events);
    if (version == 3) {
      EXPECT_GT(unpredicted, decisions / 4) << "version 3";
      EXPECT_GT(starts_out_of_line, decisions / 4) << "version 3";
    } else {
      EXPECT_EQ(unpredicted, 0u) << "version " << version;
      // Only a prediction that failed at the stream's first events or
      // after a segment's cut of a match may still open one out of line.
      EXPECT_LT(starts_out_of_line, decisions / 100 + 2) << "version " << version;
    }
  }
}

// The runtime's protocol (ThreadTrace::put_fast, put, on_countdown) with
// random event limits and time-driven flushes at random events, on
// data-dependent streams: every event decodes back, whatever the state a
// flush or a limit finds (inside a match, a literal right after a literal,
// a match's first event at the limit).
TEST(CodecV2, RoundTripUnderRandomLimitsAndFlushes) {
  for (std::uint32_t seed = 0; seed < 12; ++seed) {
    std::mt19937 rng(seed);
    const auto events = random_calls(60000, 3 + seed * 7, seed);
    VectorSink sink(512);
    V2Encoder enc(sink, sink.fresh());
    enc.set_event_limit(rng() % 5);
    for (const std::uint32_t v : events) {
      if (enc.try_extend(v)) continue;
      if (enc.events_to_limit() == 0) {
        if (rng() % 3 == 0) enc.flush();
        enc.set_event_limit(rng() % 4 == 0 ? 0 : rng() % 50);
      }
      enc.encode(v);
      if (rng() % 97 == 0) enc.flush();
    }
    enc.finish();
    sink.drain(enc.window());
    EXPECT_TRUE(decode_blocks(sink.bytes, sink.blocks, events.size(), 1 + seed * 100) == events)
        << "seed " << seed;
  }
}

// Decodes a stream block by block with decoder `d` (not reset here).
std::vector<std::uint32_t> decode_with(Decoder& d, const std::vector<std::uint8_t>& bytes,
                                       const std::vector<std::size_t>& blocks) {
  std::vector<std::uint32_t> out;
  std::vector<std::uint32_t> buf(4096);
  std::size_t off = 0;
  for (const std::size_t b : blocks) {
    d.feed(bytes.data() + off, b);
    off += b;
    for (;;) {
      const std::size_t n = d.next(buf.data(), buf.size());
      out.insert(out.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
      if (d.status() == Decoder::Status::kError) return out;
      if (n == 0) break;
    }
  }
  return out;
}

// The reader keeps one decoder per worker and resets it per stream; the
// reset clears only what the last stream used (its history slots, its
// candidate slots by generation). Each stream must decode as with a new
// decoder: after a long stream (every history slot written), after a short
// one, and after the candidate slots' generation counter wrapped.
TEST(CodecV2, ADecoderResetBetweenStreamsDecodesAsANewOne) {
  struct Stream {
    std::vector<std::uint32_t> events;
    std::vector<std::uint8_t> bytes;
    std::vector<std::size_t> blocks;
  };
  std::vector<Stream> streams(3);
  streams[0].events = random_calls(200000, 300, 1);  // > 64 K events: the history wraps
  streams[1].events = quicksort_calls(2000, 3);
  streams[2].events = random_calls(5000, 40, 2);
  for (auto& st : streams) st.bytes = encode_with<V2Encoder>(st.events, 4096, &st.blocks);

  Decoder d(Codec::kLzRank);
  for (const std::size_t i : {0u, 1u, 2u, 0u, 2u, 1u, 1u}) {
    d.reset();
    EXPECT_TRUE(decode_with(d, streams[i].bytes, streams[i].blocks) == streams[i].events)
        << "stream " << i;
  }
  // 65,536 resets bring the 16-bit generation back to the value it had
  // while stream 1 was decoded.
  d.reset();
  ASSERT_TRUE(decode_with(d, streams[1].bytes, streams[1].blocks) == streams[1].events);
  for (unsigned r = 0; r < 65536; ++r) d.reset();
  EXPECT_TRUE(decode_with(d, streams[1].bytes, streams[1].blocks) == streams[1].events);
}

// An encoder built in storage of zero bytes (ZeroedStorage: the runtime's
// fresh mapping; most of the model is then not written until used) writes
// the same bytes as one built normally, for each format version.
TEST(CodecV2, AnEncoderInZeroedStorageWritesTheSameBytes) {
  for (const unsigned version : {2u, 3u, 4u}) {
    for (const auto& events : {quicksort_calls(3000, 5), random_calls(100000, 300, 3)}) {
      const auto expected = encode_as_version(events, version, 512);
      VectorSink sink(512);
      // make_unique<T[]> value-initialises: all zero bytes.
      auto storage = std::make_unique<unsigned char[]>(sizeof(V2Encoder) + alignof(V2Encoder));
      void* at = storage.get();
      std::size_t room = sizeof(V2Encoder) + alignof(V2Encoder);
      at = std::align(alignof(V2Encoder), sizeof(V2Encoder), at, room);
      ASSERT_NE(at, nullptr);
      auto* enc = new (at) V2Encoder(sink, sink.fresh(), parlot::codec::ZeroedStorage{}, version);
      for (const auto v : events) enc->encode(v);
      enc->finish();
      sink.drain(enc->window());
      EXPECT_TRUE(sink.bytes == expected) << "version " << version;
    }
  }
}

// Built in a fresh anonymous mapping (as the runtime builds each thread's
// encoder), an encoder writes its scalars and about 11 KB of probabilities:
// the history, LZ table, candidate slots and the probabilities of each last
// width (about 950 KB) keep their zero pages until the stream uses them.
// mincore() counts the pages made resident. Before the per-width
// probabilities were initialised on first use, construction wrote ~190 KB
// (50 pages).
TEST(CodecV2, AnEncoderInAFreshMappingTouchesFewPages) {
  const long page = sysconf(_SC_PAGESIZE);
  const std::size_t bytes = (sizeof(V2Encoder) + page - 1) / page * page;
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto resident = [&] {
    std::vector<unsigned char> in(bytes / page);
    EXPECT_EQ(mincore(mem, bytes, in.data()), 0);
    std::size_t n = 0;
    for (const unsigned char c : in) n += c & 1;
    return n;
  };
  EXPECT_EQ(resident(), 0u);
  VectorSink sink(512);
  auto* enc = new (mem) V2Encoder(sink, sink.fresh(), parlot::codec::ZeroedStorage{});
  const std::size_t touched = resident();
  EXPECT_LE(touched, 8u) << "of " << bytes / page << " pages";
  // And it encodes: a short stream touches a few pages more, not all.
  const auto events = quicksort_calls(200, 3);
  for (const auto v : events) enc->encode(v);
  enc->finish();
  sink.drain(enc->window());
  EXPECT_LT(resident(), bytes / page / 4);
  EXPECT_TRUE(sink.bytes == encode_as_version(events, parlot::format::kVersion, 512));
  munmap(mem, bytes);
}

// Each format version's stream decodes only as that version: the decoder
// follows the file's format version (2: length model 1; 3: model 2; 4:
// model 2 and the table tail; 5: and the long context).
TEST(CodecV2, EachFormatVersionDecodesWithItsLengthModel) {
  auto v = quicksort_calls(50000, 8);
  const auto calls = random_calls(100000, 300, 3);  // matches that do not repeat themselves
  v.insert(v.end(), calls.begin(), calls.end());
  EXPECT_EQ(v2::length_model_of(2), 1u);
  EXPECT_EQ(v2::length_model_of(3), 2u);
  EXPECT_EQ(v2::length_model_of(4), 2u);
  EXPECT_EQ(v2::table_tail_of(3), 0u);
  EXPECT_EQ(v2::table_tail_of(4), v2::kTableTail);
  EXPECT_EQ(v2::table_tail_of(5), v2::kTableTail);
  EXPECT_FALSE(v2::long_context_of(4));
  EXPECT_TRUE(v2::long_context_of(5));
  for (const unsigned version : {2u, 3u, 4u, 5u})
    for (const unsigned other : {2u, 3u, 4u, 5u}) {
      if (other == version) continue;
      std::vector<std::size_t> blocks;
      const auto bytes = encode_as_version(v, version, 4096, &blocks);
      EXPECT_TRUE(decode_blocks(bytes, blocks, v.size(), 1000, version) == v)
          << "version " << version;
      // Another version reads other lengths or other predictions: a
      // different stream or an error.
      Decoder wrong(Codec::kLzRank);
      wrong.set_format_version(other);
      std::vector<std::uint32_t> out(v.size());
      std::size_t got = 0, off = 0;
      for (const std::size_t b : blocks) {
        wrong.feed(bytes.data() + off, b);
        off += b;
        while (got < out.size()) {
          const std::size_t n = wrong.next(out.data() + got, out.size() - got);
          got += n;
          if (n == 0) break;
        }
        if (wrong.status() == Decoder::Status::kError) break;
      }
      out.resize(got);
      EXPECT_FALSE(out == v) << "version " << version << " decoded as " << other;
    }
}

// Length model 2 codes the lengths of data-dependent streams in fewer
// bytes than model 1, and a periodic loop in no more.
TEST(CodecV2, LengthModel2IsSmallerOnDataDependentStreams) {
  const auto sorted = quicksort_calls(200000, 3);
  const auto one = encode_as_version(sorted, 2, 1 << 18);
  const auto two = encode_as_version(sorted, 3, 1 << 18);
  EXPECT_LT(two.size() * 100, one.size() * 97) << "model 1 " << one.size() << ", 2 " << two.size();
  std::vector<std::uint32_t> loop{1};
  for (int i = 0; i < 1000000; ++i) {
    for (const std::uint32_t x : {2u, 3u, 0u, 0u, 4u, 0u}) loop.push_back(x);
  }
  loop.push_back(0);
  EXPECT_LE(encode_as_version(loop, 3, 4096).size(), encode_as_version(loop, 2, 4096).size());
}

// A decoder reset() mid-stream or at the end decodes the next stream as a
// new decoder does (the reader reuses one model per worker thread).
TEST(CodecV2, ResetDecoderDecodesLikeANewOne) {
  const auto first = random_calls(60000, 50, 11);
  const auto second = quicksort_calls(2000, 12);
  std::vector<std::size_t> first_blocks, second_blocks;
  const auto first_bytes = encode_with<V2Encoder>(first, 512, &first_blocks);
  const auto second_bytes = encode_with<V2Encoder>(second, 512, &second_blocks);
  for (const std::size_t stop : {std::size_t{1000}, first.size()}) {
    Decoder d(Codec::kLzRank);
    std::vector<std::uint32_t> buf(256);
    std::size_t got = 0, block = 0, off = 0;
    while (got < stop) {  // part or all of the first stream
      const std::size_t n = d.next(buf.data(), std::min(buf.size(), stop - got));
      ASSERT_NE(d.status(), Decoder::Status::kError);
      got += n;
      if (n == 0) {
        ASSERT_LT(block, first_blocks.size());
        d.feed(first_bytes.data() + off, first_blocks[block]);
        off += first_blocks[block++];
      }
    }
    d.reset();
    std::vector<std::uint32_t> out;
    block = 0;
    off = 0;
    while (out.size() < second.size()) {
      const std::size_t n = d.next(buf.data(), std::min(buf.size(), second.size() - out.size()));
      ASSERT_NE(d.status(), Decoder::Status::kError) << d.error();
      out.insert(out.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
      if (n == 0) {
        ASSERT_LT(block, second_blocks.size());
        d.feed(second_bytes.data() + off, second_blocks[block]);
        off += second_blocks[block++];
      }
    }
    EXPECT_TRUE(out == second) << "reset after " << stop << " events";
    EXPECT_TRUE(d.at_token_boundary());
  }
}
