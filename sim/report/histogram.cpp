#include "sim/report/histogram.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "model/core/assert.h"

namespace relaysim::sim {

void LatencyHistogram::add(Duration d) {
  const auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(1, d.count()));
  const int octave = 63 - std::countl_zero(ns);
  const int sub = octave >= 4 ? static_cast<int>((ns >> (octave - 4)) & (kSub - 1)) : 0;
  RELAYSIM_ASSERT(static_cast<std::size_t>(octave * kSub + sub) < buckets_.size(), "a duration's bucket is in the histogram");
  ++buckets_[static_cast<std::size_t>(octave * kSub + sub)];
  ++count_;
  sum_s_ += to_seconds(d);
  max_ = std::max(max_, d);
}

Duration LatencyHistogram::quantile(double q) const {
  RELAYSIM_ASSERT(q > 0 && q <= 1, "a quantile is in (0, 1]");
  if (count_ == 0) return Duration::zero();
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  return at_rank(std::clamp<std::uint64_t>(rank, 1, count_));
}

Duration LatencyHistogram::at_rank(std::uint64_t k) const {
  RELAYSIM_ASSERT(k >= 1 && k <= count_, "a rank among the durations held");
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= k) return upper_edge(i);
  }
  return max_;
}

Duration LatencyHistogram::bucket_width(Duration d) {
  const auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(1, d.count()));
  const int octave = 63 - std::countl_zero(ns);
  return Duration{octave >= 4 ? std::int64_t{1} << (octave - 4) : 1};
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_s_ += other.sum_s_;
  max_ = std::max(max_, other.max_);
}

std::string LatencyHistogram::encode() const {
  char buf[64];
  std::string out = std::to_string(max_.count());
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    if (buckets_[i] == 0) continue;
    std::snprintf(buf, sizeof buf, " %zu:%llu", i, static_cast<unsigned long long>(buckets_[i]));
    out += buf;
  }
  return out;
}

std::optional<LatencyHistogram> LatencyHistogram::decode(std::string_view text) {
  LatencyHistogram h;
  const char* p = text.data();
  const char* const end = text.data() + text.size();
  long long max_ns = 0;
  auto [after_max, e1] = std::from_chars(p, end, max_ns);
  if (e1 != std::errc{} || max_ns < 0) return std::nullopt;
  p = after_max;
  h.max_ = Duration{max_ns};
  h.sum_s_ = std::numeric_limits<double>::quiet_NaN();
  std::size_t last = 0;
  bool first = true;
  while (p != end) {
    std::size_t bucket = 0;
    std::uint64_t n = 0;
    if (*p != ' ') return std::nullopt;
    auto [after_bucket, e3] = std::from_chars(p + 1, end, bucket);
    if (e3 != std::errc{} || after_bucket == end || *after_bucket != ':') return std::nullopt;
    auto [after_n, e4] = std::from_chars(after_bucket + 1, end, n);
    if (e4 != std::errc{} || n == 0 || bucket >= h.buckets_.size() || (!first && bucket <= last)) return std::nullopt;
    if (h.count_ + n < h.count_) return std::nullopt;
    h.buckets_[bucket] = n;
    h.count_ += n;
    last = bucket;
    first = false;
    p = after_n;
  }
  return h;
}

// The bucket's upper edge, but never past the largest value seen.
Duration LatencyHistogram::upper_edge(std::size_t bucket) const {
  RELAYSIM_ASSERT(bucket < buckets_.size(), "a bucket of the histogram");
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
  RELAYSIM_ASSERT(seen == count_, "the buckets hold every duration counted");
  return out;
}

}  // namespace relaysim::sim
