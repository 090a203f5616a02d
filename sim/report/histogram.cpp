#include "sim/report/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace relaysim::sim {

void LatencyHistogram::add(Duration d) {
  const auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(1, d.count()));
  const int octave = 63 - std::countl_zero(ns);
  const int sub = octave >= 4 ? static_cast<int>((ns >> (octave - 4)) & (kSub - 1)) : 0;
  ++buckets_[static_cast<std::size_t>(octave * kSub + sub)];
  ++count_;
  sum_s_ += to_seconds(d);
  max_ = std::max(max_, d);
}

Duration LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return Duration::zero();
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= std::max<std::uint64_t>(rank, 1)) {
      return upper_edge(i);
    }
  }
  return max_;
}

// The bucket's upper edge, but never past the largest value seen.
Duration LatencyHistogram::upper_edge(std::size_t bucket) const {
  const int octave = static_cast<int>(bucket) / kSub;
  const int sub = static_cast<int>(bucket) % kSub;
  const double upper = std::ldexp(1.0 + (sub + 1) / static_cast<double>(kSub), octave);
  return std::min(Duration{static_cast<std::int64_t>(std::min(upper, 9.2e18))}, max_);
}

std::vector<LatencyHistogram::CdfPoint> LatencyHistogram::cdf() const {
  std::vector<CdfPoint> out;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    if (buckets_[i] == 0) continue;
    seen += buckets_[i];
    out.push_back({to_seconds(upper_edge(i)), static_cast<double>(seen) / static_cast<double>(count_)});
  }
  return out;
}

}  // namespace relaysim::sim
