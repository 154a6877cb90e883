// The swing-door filter of clock samples (runtime/time/clock_sample_filter.h):
// the reader's straight-line interpolation between the kept samples must
// stay within the tolerance of every sample read, and a steady rate keeps
// only the ends.
#include "time/clock_sample_filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace {

using parlot::runtime::ClockSampleFilter;
using Sample = std::pair<std::uint64_t, std::uint64_t>;  // event index, ns

// Feeds `read` (the first as start, the last as keep, the rest as offers)
// and returns the kept samples.
std::vector<Sample> filter(const std::vector<Sample>& read, std::uint64_t tolerance_ns) {
  std::vector<Sample> kept;
  auto sink = [&](std::uint64_t i, std::uint64_t t) { kept.emplace_back(i, t); };
  ClockSampleFilter f;
  f.set_tolerance_ns(tolerance_ns);
  f.start(read.front().first, read.front().second, sink);
  for (std::size_t k = 1; k + 1 < read.size(); ++k) f.offer(read[k].first, read[k].second, sink);
  f.keep(read.back().first, read.back().second, sink);
  return kept;
}

// The reader's interpolation (docs/FORMAT.md, kind 1) at event `i`.
double interpolate(const std::vector<Sample>& kept, std::uint64_t i) {
  for (std::size_t k = 1; k < kept.size(); ++k) {
    if (i <= kept[k].first) {
      const auto [i0, t0] = kept[k - 1];
      const auto [i1, t1] = kept[k];
      if (i1 == i0) return static_cast<double>(t1);
      return static_cast<double>(t0) + static_cast<double>(i - i0) *
                                           (static_cast<double>(t1) - static_cast<double>(t0)) /
                                           static_cast<double>(i1 - i0);
    }
  }
  return static_cast<double>(kept.back().second);
}

TEST(ClockSampleFilter, SteadyRateKeepsOnlyTheEnds) {
  std::vector<Sample> read;
  for (std::uint64_t k = 0; k <= 1000; ++k) read.emplace_back(k * 1024, 5000 + k * 3000);
  const auto kept = filter(read, 1000);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept.front(), read.front());
  EXPECT_EQ(kept.back(), read.back());
}

TEST(ClockSampleFilter, ZeroToleranceKeepsEverySample) {
  std::vector<Sample> read;
  for (std::uint64_t k = 0; k <= 50; ++k) read.emplace_back(k * 10, k * k);
  EXPECT_EQ(filter(read, 0), read);
}

TEST(ClockSampleFilter, RateChangeKeepsTheCorner) {
  // 100 samples at 1 ns/event, then 100 at 1000 ns/event: the corner
  // (index 100 * 64) must be kept, the straight runs need nothing else.
  std::vector<Sample> read;
  std::uint64_t t = 0;
  for (std::uint64_t k = 0; k <= 200; ++k) {
    read.emplace_back(k * 64, t);
    t += k < 100 ? 64 : 64000;
  }
  const auto kept = filter(read, 500);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[1], read[100]);
}

TEST(ClockSampleFilter, InterpolationStaysWithinToleranceOfEverySampleRead) {
  // Random rates with bursts and pauses (a thread that computes, blocks,
  // and computes again), many seeds and tolerances.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Sample> read;
    std::uint64_t t = 1'000'000;
    for (std::uint64_t k = 0; k <= 5000; ++k) {
      read.emplace_back(k * 1024, t);
      const std::uint64_t r = rng() % 100;
      t += r < 90 ? 5000 + rng() % 300 : r < 98 ? 20000 + rng() % 50000 : 2'000'000;
    }
    for (const std::uint64_t tol : {100u, 10'000u, 50'000u}) {
      const auto kept = filter(read, tol);
      ASSERT_GE(kept.size(), 2u);
      EXPECT_EQ(kept.front(), read.front());
      EXPECT_EQ(kept.back(), read.back());
      double worst = 0;
      for (const auto& [i, ns] : read) {
        worst = std::max(worst, std::fabs(interpolate(kept, i) - static_cast<double>(ns)));
      }
      EXPECT_LE(worst, static_cast<double>(tol) + 1e-6) << "seed " << seed << " tol " << tol;
      EXPECT_LT(kept.size(), read.size()) << "seed " << seed << " tol " << tol;
    }
  }
}

TEST(ClockSampleFilter, SamplesGoingBackAreIgnored) {
  std::vector<Sample> kept;
  auto sink = [&](std::uint64_t i, std::uint64_t t) { kept.emplace_back(i, t); };
  ClockSampleFilter f;
  f.set_tolerance_ns(10);
  f.start(100, 1000, sink);
  f.offer(50, 2000, sink);  // index back
  f.offer(200, 900, sink);  // time back
  f.keep(300, 3000, sink);
  EXPECT_EQ(kept, (std::vector<Sample>{{100, 1000}, {300, 3000}}));
}

}  // namespace
