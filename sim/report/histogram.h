// LatencyHistogram: durations in log buckets, 128 per power of two — a bucket is 0.39 % to 0.78 %
// of the durations it holds wide — with an exact count, sum, minimum and maximum. A quantile is
// read inside its bucket, as if the bucket's durations were spread evenly across it, and never
// outside the smallest and the largest duration seen; the mean and the extremes are exact.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/time.h"

namespace relaysim::sim {

class LatencyHistogram {
 public:
  void add(Duration d);
  std::uint64_t count() const { return count_; }
  // The q-quantile (0 < q <= 1): the duration of rank ⌈q·count⌉; zero when empty.
  Duration quantile(double q) const;
  // The duration of rank `k` (1 <= k <= count()) in increasing order, read inside its bucket:
  // the j-th of a bucket's n durations lies (j - ½)/n of the way across it; the largest is the
  // maximum. An order statistic, for a quantile's interval.
  Duration at_rank(std::uint64_t k) const;
  // How many buckets a power of two is cut into, and the widest a bucket is against the durations
  // it holds (1/128: 0.78 %), for the docs and the figures that state their resolution.
  static constexpr int kBucketsPerOctave = 128;
  static constexpr double kResolution = 1.0 / kBucketsPerOctave;
  // The width of the bucket `d` falls in: how finely a quantile near `d` is known (0.39-0.78 %
  // of d).
  static Duration bucket_width(Duration d);
  // Adds every duration `other` holds: the pooled distribution of several runs.
  void merge(const LatencyHistogram& other);
  // What was added since `earlier`, an earlier copy of this histogram, as the buckets that grew
  // (in increasing order) and by how much: one window of a trace that keeps a distribution per
  // minute (sim/report/backlog.h) without 64 KiB a minute.
  struct Piece {
    std::uint16_t bucket = 0;
    std::uint64_t count = 0;
  };
  std::vector<Piece> added_since(const LatencyHistogram& earlier) const;
  // Two parts of one window, together.
  static std::vector<Piece> joined(const std::vector<Piece>& a, const std::vector<Piece>& b);
  // The q-quantile (0 < q <= 1) of such a window: the duration of rank ⌈q·n⌉, read inside its
  // bucket as at_rank() reads it; its extremes are known only as their buckets' edges. Zero when
  // the window holds nothing.
  static Duration quantile_of(const std::vector<Piece>& window, double q);
  // As one line of text, "max_ns bucket:count ...": the counts and the maximum, which decode()
  // reads back exactly. The sum is left out, as it depends on the order durations were added in
  // (floating point), and a file must not: a histogram read back has no mean (NaN).
  std::string encode() const;
  static std::optional<LatencyHistogram> decode(std::string_view text);
  // The same durations in each bucket, and the same maximum.
  bool same_counts(const LatencyHistogram& o) const { return buckets_ == o.buckets_ && count_ == o.count_ && max_ == o.max_; }
  Duration max() const { return max_; }
  Duration min() const { return min_; }
  double mean_seconds() const { return count_ == 0 ? 0.0 : sum_s_ / static_cast<double>(count_); }
  // The mean as a metric shows it: no figure (NaN) when nothing was measured.
  double mean_metric_s() const { return count_ == 0 ? std::numeric_limits<double>::quiet_NaN() : mean_seconds(); }

  // The distribution as a plot draws it, in steps of 16 a power of two: for each step that holds
  // something, its upper edge in seconds (never past the maximum) and the fraction of the
  // durations at or below it. Ends at 1.0; empty when nothing was added.
  struct CdfPoint {
    double seconds = 0;
    double fraction = 0;
  };
  std::vector<CdfPoint> cdf() const;

 private:
  static constexpr int kSub = kBucketsPerOctave;
  static constexpr int kSubBits = 7;
  static_assert(kSub == 1 << kSubBits, "a power of two is cut into 2^kSubBits buckets");
  static std::size_t bucket_of(Duration d);
  // The bucket's edges in nanoseconds, as real numbers (the lower one is its smallest duration).
  static double lower_edge(std::size_t bucket);
  static double upper_edge(std::size_t bucket);
  // The j-th (1-based) of a bucket's n durations, as if they were spread evenly across it: (j - ½)/n
  // of the way from its lower edge to its upper one.
  static Duration read_in_bucket(std::size_t bucket, std::uint64_t j, std::uint64_t n);
  // The rank of the q-quantile among n > 0 durations: ⌈q·n⌉, at least 1.
  static std::uint64_t rank_of(double q, std::uint64_t n);
  std::array<std::uint64_t, 64 * kSub> buckets_{};
  std::uint64_t count_ = 0;
  double sum_s_ = 0.0;
  Duration min_ = Duration::max();  // none yet; a histogram read back knows only its buckets' edges
  Duration max_{};
};

}  // namespace relaysim::sim
