// The similarity metrics of `reduce` (analysis/similarity.h) against values
// computed by hand from the seed's worked example (Mohror and Karavanic,
// Figures 2 and 3: segments s0, s1, s2 of a loop of do_work and
// MPI_Allgather, times relative to each segment's start).
#include "analysis/similarity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace parlot::analysis {
namespace {

// Minkowski vectors of the seed's text: (segment end, do_work entry, exit,
// MPI_Allgather entry, exit).
const std::vector<double> kS0 = {50, 1, 20, 21, 49};
const std::vector<double> kS1 = {51, 1, 40, 41, 50};
const std::vector<double> kS2 = {49, 1, 17, 18, 48};
// Wavelet vectors: (start 0, the four event times, end).
const std::vector<double> kW0 = {0, 1, 20, 21, 49, 50};
const std::vector<double> kW2 = {0, 1, 17, 18, 48, 49};

TEST(Similarity, RelativeDifferenceOfOnePair) {
  EXPECT_DOUBLE_EQ(relative_difference(17, 40), 23.0 / 40);
  EXPECT_DOUBLE_EQ(relative_difference(40, 17), 23.0 / 40);
  EXPECT_DOUBLE_EQ(relative_difference(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(relative_difference(1, 2), 0.5);
}

TEST(Similarity, RelDiffFailsOnTheWorstPairOnly) {
  // s2 vs s1: do_work's exit 17 vs 40 gives 0.575 > 0.5.
  const Distance a = distance(Metric::kRelDiff, kS2, kS1, 0.5);
  EXPECT_NEAR(a.distance, 23.0 / 40, 1e-12);
  EXPECT_FALSE(a.matches());
  // s2 vs s0: the largest is 17 vs 20, 0.15.
  const Distance b = distance(Metric::kRelDiff, kS2, kS0, 0.5);
  EXPECT_NEAR(b.distance, 3.0 / 20, 1e-12);
  EXPECT_TRUE(b.matches());
}

TEST(Similarity, AbsDiffComparesEachPairWithAFixedAllowance) {
  EXPECT_FALSE(distance(Metric::kAbsDiff, kS2, kS1, 20).matches());  // 23 apart
  const Distance d = distance(Metric::kAbsDiff, kS2, kS0, 20);
  EXPECT_DOUBLE_EQ(d.distance, 3);
  EXPECT_TRUE(d.matches());
}

TEST(Similarity, MinkowskiDistancesOfTheSeedsExample) {
  EXPECT_DOUBLE_EQ(minkowski(kS2, kS1, 1), 50);
  EXPECT_NEAR(minkowski(kS2, kS1, 2), std::sqrt(1066.0), 1e-9);  // 32.6
  EXPECT_DOUBLE_EQ(minkowski(kS2, kS1, 0), 23);
  EXPECT_DOUBLE_EQ(minkowski(kS0, kS2, 1), 8);
  EXPECT_NEAR(minkowski(kS0, kS2, 2), std::sqrt(20.0), 1e-9);  // 4.5
  EXPECT_DOUBLE_EQ(minkowski(kS0, kS2, 0), 3);
}

TEST(Similarity, MinkowskiLimitIsThresholdTimesTheLargestMeasurement) {
  for (const Metric m : {Metric::kManhattan, Metric::kEuclidean, Metric::kChebyshev}) {
    const Distance no = distance(m, kS2, kS1, 0.2);
    EXPECT_NEAR(no.limit, 10.2, 1e-12) << metric_name(m);
    EXPECT_FALSE(no.matches()) << metric_name(m);
    const Distance yes = distance(m, kS0, kS2, 0.2);
    EXPECT_NEAR(yes.limit, 10.0, 1e-12) << metric_name(m);
    EXPECT_TRUE(yes.matches()) << metric_name(m);
  }
  EXPECT_DOUBLE_EQ(distance(Metric::kManhattan, kS0, kS2, 0.2).distance, 8);
  EXPECT_DOUBLE_EQ(distance(Metric::kChebyshev, kS0, kS2, 0.2).distance, 3);
}

TEST(Similarity, AverageWaveletOfTheSeedsFigure3) {
  // Levels: (0.5, 20.5, 49.5, 0) -> (10.5, 24.75) -> 17.625.
  const std::vector<double> expected = {17.625, 7.125, 10, -24.75, 0.5, 0.5, 0.5, 0};
  EXPECT_EQ(average_wavelet(kW0), expected);
  EXPECT_DOUBLE_EQ(average_wavelet(kW2)[0], 16.625);
}

TEST(Similarity, AvgWaveMatchesS0AndS2AsTheSeedDoes) {
  // Distance 1.9 against 0.2 x 17.625 = 3.5.
  const Distance d = distance(Metric::kAvgWave, kW0, kW2, 0.2);
  EXPECT_NEAR(d.distance, std::sqrt(3.75), 1e-12);
  EXPECT_NEAR(d.limit, 3.525, 1e-12);
  EXPECT_TRUE(d.matches());
  EXPECT_FALSE(distance(Metric::kAvgWave, kW0, kW2, 0.1).matches());  // limit 1.76
}

TEST(Similarity, HaarWaveletIsOrthonormal) {
  const std::vector<double> one = {1, 3};
  const auto h = haar_wavelet(one);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_NEAR(h[0], 4 / std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(h[1], 2 / std::sqrt(2.0), 1e-12);
  // It preserves the Euclidean distance (padding adds equal zeros).
  const Distance d = distance(Metric::kHaarWave, kW0, kW2, 0.2);
  EXPECT_NEAR(d.distance, minkowski(kW0, kW2, 2), 1e-9);
  // Its largest element is the overall trend, sum / sqrt(8).
  EXPECT_NEAR(d.limit, 0.2 * 141 / std::sqrt(8.0), 1e-9);
}

TEST(Similarity, NamesRoundTripAndDefaultThresholdsAreTheSeeds) {
  for (const Metric m : kAllMetrics) EXPECT_EQ(parse_metric(metric_name(m)), m);
  EXPECT_FALSE(parse_metric("cosine"));
  EXPECT_DOUBLE_EQ(default_threshold(Metric::kRelDiff), 0.8);
  EXPECT_DOUBLE_EQ(default_threshold(Metric::kManhattan), 0.4);
  EXPECT_DOUBLE_EQ(default_threshold(Metric::kEuclidean), 0.2);
  EXPECT_DOUBLE_EQ(default_threshold(Metric::kIterK), 10);
}

}  // namespace
}  // namespace parlot::analysis
