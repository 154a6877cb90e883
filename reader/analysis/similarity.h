// Distance metrics between two segments of a timed trace (Mohror and
// Karavanic, "Evaluating similarity-based trace reduction techniques for
// scalable performance analysis", SC 2009, section 3.2): a segment is
// measured as a vector of times relative to its start (every event's time,
// then the segment's end), and two segments with the same events in the
// same order match when their vectors are within a threshold. `reduce`
// keeps one representative per group of matching segments.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace parlot::analysis {

/// The seed's similarity methods. Distance methods compare two measurement
/// vectors; iteration methods (iter_k, iter_avg) decide by count alone.
enum class Metric : std::uint8_t {
  kRelDiff,    ///< every pair: |x - y| / max(x, y) <= threshold
  kAbsDiff,    ///< every pair: |x - y| <= threshold (in the time unit: ns)
  kManhattan,  ///< L1(x, y) <= threshold * max element of x and y
  kEuclidean,  ///< L2(x, y) <= threshold * max element
  kChebyshev,  ///< Linf(x, y) <= threshold * max element
  kAvgWave,    ///< L2 of the average wavelet transforms <= threshold * their max element
  kHaarWave,   ///< L2 of the Haar wavelet transforms <= threshold * their max element
  kIterK,      ///< keep the first k (= threshold) segments of each kind
  kIterAvg,    ///< keep one segment of each kind, holding the average times
};

/// Every metric, in the order above.
inline constexpr Metric kAllMetrics[] = {Metric::kRelDiff,   Metric::kAbsDiff,   Metric::kManhattan,
                                         Metric::kEuclidean, Metric::kChebyshev, Metric::kAvgWave,
                                         Metric::kHaarWave,  Metric::kIterK,     Metric::kIterAvg};

/// The name `--metric` takes: "reldiff", "absdiff", "manhattan",
/// "euclidean", "chebyshev", "avgwave", "haarwave", "iterk", "iteravg".
std::string_view metric_name(Metric m);

/// The metric named `name` (metric_name's spelling), or nullopt.
std::optional<Metric> parse_metric(std::string_view name);

/// The seed's best threshold for `m` (its section 5.1): 0.8 relDiff; 0.4
/// Manhattan; 0.2 Euclidean, Chebyshev and both wavelets; k = 10 for
/// iter_k; 0 for iter_avg (unused). absDiff: 1,000,000 (ns: 1 ms; the
/// seed's 10^3 was in its own time unit).
double default_threshold(Metric m);

/// |x - y| / max(x, y) for x, y >= 0; 0 when both are 0.
double relative_difference(double x, double y);

/// Minkowski distance of order `order` (1 Manhattan, 2 Euclidean) between
/// vectors of equal length; order 0 means the Chebyshev distance (the
/// limit: the largest |x_i - y_i|). 0 for empty vectors.
double minkowski(std::span<const double> x, std::span<const double> y, unsigned order);

/// The seed's wavelet transforms of `v`, zero-padded to the next power of
/// two: each level replaces pairs (a, b) by the average (a + b) / 2 and the
/// difference (b - a) / 2 (Haar: both times sqrt(2)); the result is
/// [overall trend, then the differences, coarsest level first]. An empty
/// input gives an empty result.
std::vector<double> average_wavelet(std::span<const double> v);
std::vector<double> haar_wavelet(std::span<const double> v);

/// The distance `m` computes between `x` and `y` (equal lengths) and the
/// largest distance at which they match with `threshold`:
/// match when distance <= limit.
struct Distance {
  double distance = 0;
  double limit = 0;
  bool matches() const { return distance <= limit; }
};

/// For the distance metrics (not iter_k, iter_avg): `m`'s distance between
/// measurement vectors `x` and `y` of equal length, and its limit for
/// `threshold` (relDiff: the largest pairwise relative difference against
/// `threshold`; absDiff: the largest pairwise difference against it).
Distance distance(Metric m, std::span<const double> x, std::span<const double> y, double threshold);

}  // namespace parlot::analysis
