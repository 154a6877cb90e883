// Codec 2 (include/parlot/codec_v2.h, codec/rank_*): round trips block by block and across
// segment cuts, its ratio against codec 1, and malformed input.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "codec/decoder.h"
#include "codec/lz_model.h"
#include "codec/rank_model.h"
#include "codec/segments.h"
#include "codec_test_support.h"
#include "parlot/codec.h"

namespace {

using parlot::codec::Decoder;
using parlot::codec_test::decode_blocks;
using parlot::codec_test::encode_as_version;
using parlot::codec_test::encode_with;
using parlot::codec_test::quicksort_calls;
using parlot::codec_test::random_calls;
using parlot::codec_test::VectorSink;
using parlot::codec_test::VersionEncoder;
using parlot::format::Codec;
namespace v2 = parlot::codec::v2;

using V2Encoder = v2::Encoder;

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
  const auto one = encode_with<parlot::codec::Encoder>(v, 4096);
  const auto two = encode_with<V2Encoder>(v, 4096);
  EXPECT_LE(two.size(), one.size());
}

TEST(CodecV2, RanksLiteralsOfDataDependentCallsFarBelowCodec1) {
  const auto v = quicksort_calls(200000, 3);
  std::vector<std::size_t> blocks;
  const auto two = encode_with<V2Encoder>(v, 1 << 18, &blocks);
  const auto one = encode_with<parlot::codec::Encoder>(v, 1 << 18);
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
