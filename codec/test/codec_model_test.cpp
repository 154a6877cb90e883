// The codec's models: LzModel's catch-up and long context, and codec 2's
// structural context walk (codec/lz_model.h, codec/rank_model.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "codec/lz_model.h"
#include "codec/rank_model.h"
#include "codec_test_support.h"
#include "parlot/codec.h"

namespace {

using parlot::codec_test::quicksort_calls;
using parlot::codec_test::random_calls;
namespace v2 = parlot::codec::v2;

}  // namespace

namespace structure {

// The structural walk as codec/FORMAT.md states it (and as the first codec-2
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
