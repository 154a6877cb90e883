#include "analysis/similarity.h"

#include <algorithm>
#include <cmath>

namespace parlot::analysis {

namespace {

constexpr std::string_view kNames[] = {"reldiff", "absdiff",  "manhattan", "euclidean", "chebyshev",
                                       "avgwave", "haarwave", "iterk",     "iteravg"};

/// `v` zero-padded to the next power of two, transformed level by level
/// with averages and differences scaled by `scale` (1/2 or 1/sqrt(2)).
std::vector<double> wavelet(std::span<const double> v, double scale) {
  if (v.empty()) return {};
  std::size_t n = 1;
  while (n < v.size()) n *= 2;
  std::vector<double> out(n, 0.0), level(v.begin(), v.end());
  level.resize(n, 0.0);
  for (std::size_t len = n; len > 1; len /= 2) {
    const std::size_t half = len / 2;
    std::vector<double> next(half);
    for (std::size_t i = 0; i < half; ++i) {
      next[i] = (level[2 * i] + level[2 * i + 1]) * scale;
      out[half + i] = (level[2 * i + 1] - level[2 * i]) * scale;
    }
    level = std::move(next);
  }
  out[0] = level[0];
  return out;
}

double largest(std::span<const double> x, std::span<const double> y) {
  double m = 0;
  bool any = false;
  for (const double v : x) m = any ? std::max(m, v) : v, any = true;
  for (const double v : y) m = any ? std::max(m, v) : v, any = true;
  return m;
}

}  // namespace

std::string_view metric_name(Metric m) {
  return kNames[static_cast<std::size_t>(m)];
}

std::optional<Metric> parse_metric(std::string_view name) {
  for (const Metric m : kAllMetrics) {
    if (metric_name(m) == name) return m;
  }
  return std::nullopt;
}

double default_threshold(Metric m) {
  switch (m) {
    case Metric::kRelDiff:
      return 0.8;
    case Metric::kAbsDiff:
      return 1e6;
    case Metric::kManhattan:
      return 0.4;
    case Metric::kIterK:
      return 10;
    case Metric::kIterAvg:
      return 0;
    default:
      return 0.2;
  }
}

double relative_difference(double x, double y) {
  const double m = std::max(x, y);
  return m > 0 ? std::fabs(x - y) / m : 0.0;
}

double minkowski(std::span<const double> x, std::span<const double> y, unsigned order) {
  const std::size_t n = std::min(x.size(), y.size());
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = std::fabs(x[i] - y[i]);
    if (order == 0) {
      sum = std::max(sum, d);
    } else if (order == 1) {
      sum += d;
    } else {
      sum += std::pow(d, order);
    }
  }
  return order <= 1 ? sum : std::pow(sum, 1.0 / order);
}

std::vector<double> average_wavelet(std::span<const double> v) {
  return wavelet(v, 0.5);
}

std::vector<double> haar_wavelet(std::span<const double> v) {
  return wavelet(v, 1.0 / std::sqrt(2.0));
}

Distance distance(Metric m, std::span<const double> x, std::span<const double> y,
                  double threshold) {
  const std::size_t n = std::min(x.size(), y.size());
  Distance d;
  switch (m) {
    case Metric::kRelDiff:
      for (std::size_t i = 0; i < n; ++i) {
        d.distance = std::max(d.distance, relative_difference(x[i], y[i]));
      }
      d.limit = threshold;
      return d;
    case Metric::kAbsDiff:
      d.distance = minkowski(x, y, 0);
      d.limit = threshold;
      return d;
    case Metric::kManhattan:
    case Metric::kEuclidean:
    case Metric::kChebyshev:
      d.distance = minkowski(x, y, m == Metric::kManhattan ? 1 : m == Metric::kEuclidean ? 2 : 0);
      d.limit = threshold * largest(x, y);
      return d;
    case Metric::kAvgWave:
    case Metric::kHaarWave: {
      const auto a = m == Metric::kAvgWave ? average_wavelet(x) : haar_wavelet(x);
      const auto b = m == Metric::kAvgWave ? average_wavelet(y) : haar_wavelet(y);
      d.distance = minkowski(a, b, 2);
      d.limit = threshold * largest(a, b);
      return d;
    }
    default:
      d.limit = 0;  // iteration methods have no distance: every pair matches
      return d;
  }
}

}  // namespace parlot::analysis
