#include "sim/report/histogram.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "model/core/assert.h"

namespace relaysim::sim {

std::size_t LatencyHistogram::bucket_of(Duration d) {
  // A power of two [2^o, 2^(o+1)) is cut into kSub equal buckets by the kSubBits bits below its
  // top bit; below 2^kSubBits nanoseconds each duration has a bucket of its own.
  const auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(1, d.count()));
  const int octave = 63 - std::countl_zero(ns);
  const std::uint64_t sub = octave >= kSubBits ? (ns >> (octave - kSubBits)) & (kSub - 1) : (ns << (kSubBits - octave)) & (kSub - 1);
  const std::size_t bucket = static_cast<std::size_t>(octave) * kSub + sub;
  RELAYSIM_ASSERT(bucket < 64 * kSub, "a duration's bucket is in the histogram");
  return bucket;
}

double LatencyHistogram::lower_edge(std::size_t bucket) {
  RELAYSIM_ASSERT(bucket < 64 * kSub, "a bucket of the histogram");
  const int octave = static_cast<int>(bucket / kSub);
  const int sub = static_cast<int>(bucket % kSub);
  return std::ldexp(1.0 + sub / static_cast<double>(kSub), octave);
}

double LatencyHistogram::upper_edge(std::size_t bucket) {
  RELAYSIM_ASSERT(bucket < 64 * kSub, "a bucket of the histogram");
  const int octave = static_cast<int>(bucket / kSub);
  const int sub = static_cast<int>(bucket % kSub);
  return std::ldexp(1.0 + (sub + 1) / static_cast<double>(kSub), octave);
}

std::uint64_t LatencyHistogram::rank_of(double q, std::uint64_t n) {
  RELAYSIM_ASSERT(q > 0 && q <= 1 && n > 0, "a quantile of some durations");
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n))), 1, n);
}

Duration LatencyHistogram::read_in_bucket(std::size_t bucket, std::uint64_t j, std::uint64_t n) {
  RELAYSIM_ASSERT(j >= 1 && j <= n, "one of the bucket's durations");
  const double lower = lower_edge(bucket);
  const double ns = lower + (upper_edge(bucket) - lower) * (static_cast<double>(j) - 0.5) / static_cast<double>(n);
  return Duration{static_cast<std::int64_t>(std::llround(std::min(ns, 9.2e18)))};
}

void LatencyHistogram::add(Duration d) {
  ++buckets_[bucket_of(d)];
  ++count_;
  sum_s_ += to_seconds(d);
  min_ = std::min(min_, d);
  max_ = std::max(max_, d);
}

Duration LatencyHistogram::quantile(double q) const {
  RELAYSIM_ASSERT(q > 0 && q <= 1, "a quantile is in (0, 1]");
  if (count_ == 0) return Duration::zero();
  return at_rank(rank_of(q, count_));
}

Duration LatencyHistogram::at_rank(std::uint64_t k) const {
  RELAYSIM_ASSERT(k >= 1 && k <= count_, "a rank among the durations held");
  // The extremes are known exactly (the smallest only as its bucket's edge once read back).
  if (k == count_) return max_;
  if (k == 1 && min_ <= max_) return min_;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    const std::uint64_t n = buckets_[i];
    if (seen + n < k) {
      seen += n;
      continue;
    }
    // Never outside what was seen: a bucket that holds one repeated duration reads it exactly.
    return std::clamp(read_in_bucket(i, k - seen, n), std::min(min_, max_), max_);
  }
  RELAYSIM_ASSERT(false, "the buckets hold every duration counted");
  return max_;
}

Duration LatencyHistogram::bucket_width(Duration d) {
  const std::size_t bucket = bucket_of(d);
  return Duration{std::max<std::int64_t>(1, std::llround(upper_edge(bucket) - lower_edge(bucket)))};
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_s_ += other.sum_s_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

static_assert(64 * LatencyHistogram::kBucketsPerOctave <= 1 << 16, "a Piece names its bucket in 16 bits");

std::vector<LatencyHistogram::Piece> LatencyHistogram::added_since(const LatencyHistogram& earlier) const {
  RELAYSIM_ASSERT(earlier.count_ <= count_, "an earlier copy holds no more than the histogram");
  std::vector<Piece> out;
  if (earlier.count_ == count_) return out;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    RELAYSIM_ASSERT(earlier.buckets_[i] <= buckets_[i], "an earlier copy's buckets are no fuller");
    if (buckets_[i] != earlier.buckets_[i]) out.push_back({static_cast<std::uint16_t>(i), buckets_[i] - earlier.buckets_[i]});
  }
  return out;
}

std::vector<LatencyHistogram::Piece> LatencyHistogram::joined(const std::vector<Piece>& a, const std::vector<Piece>& b) {
  std::vector<Piece> out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].bucket < b[j].bucket)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].bucket < a[i].bucket) {
      out.push_back(b[j++]);
    } else {
      out.push_back({a[i].bucket, a[i].count + b[j].count});
      ++i;
      ++j;
    }
  }
  return out;
}

Duration LatencyHistogram::quantile_of(const std::vector<Piece>& window, double q) {
  RELAYSIM_ASSERT(q > 0 && q <= 1, "a quantile is in (0, 1]");
  std::uint64_t n = 0;
  for (const Piece& p : window) n += p.count;
  if (n == 0) return Duration::zero();
  const std::uint64_t k = rank_of(q, n);
  std::uint64_t seen = 0;
  for (const Piece& p : window) {
    if (seen + p.count < k) {
      seen += p.count;
      continue;
    }
    return read_in_bucket(p.bucket, k - seen, p.count);
  }
  RELAYSIM_ASSERT(false, "the pieces hold every duration counted");
  return Duration::zero();
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
    if (first) h.min_ = Duration{static_cast<std::int64_t>(std::min(lower_edge(bucket), 9.2e18))};
    last = bucket;
    first = false;
    p = after_n;
  }
  // The largest duration lies in the last bucket that holds any: a histogram cut otherwise (by
  // another version, or by hand) is not one this one can read.
  if (h.count_ > 0 && bucket_of(h.max_) != last) return std::nullopt;
  return h;
}

std::vector<LatencyHistogram::CdfPoint> LatencyHistogram::cdf() const {
  // A plot needs no finer steps than 16 a power of two: the buckets are drawn kCdfGroup at a time,
  // which keeps a result's JSON and a report's charts the size they were when that was the
  // histogram's own resolution.
  constexpr std::size_t kCdfGroup = kSub / 16;
  std::vector<CdfPoint> out;
  std::uint64_t seen = 0;
  for (std::size_t g = 0; g < buckets_.size(); g += kCdfGroup) {
    std::uint64_t n = 0;
    for (std::size_t i = g; i < g + kCdfGroup; ++i) n += buckets_[i];
    if (n == 0) continue;
    seen += n;
    const Duration edge{static_cast<std::int64_t>(std::min(upper_edge(g + kCdfGroup - 1), 9.2e18))};
    out.push_back({to_seconds(std::min(edge, max_)), static_cast<double>(seen) / static_cast<double>(count_)});
  }
  RELAYSIM_ASSERT(seen == count_, "the buckets hold every duration counted");
  return out;
}

}  // namespace relaysim::sim
