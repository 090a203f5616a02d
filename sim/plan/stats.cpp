#include "sim/plan/stats.h"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/core/assert.h"

namespace relaysim::sim {

double Estimate::relative_precision() const {
  if (n < 2 || mean == 0) return std::numeric_limits<double>::quiet_NaN();
  return half_width() / std::abs(mean);
}

Estimate estimate(std::span<const double> values, double confidence) {
  RELAYSIM_ASSERT(confidence > 0 && confidence < 1, "a confidence is a probability");
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  Estimate e;
  double sum = 0;
  e.min = std::numeric_limits<double>::infinity();
  e.max = -std::numeric_limits<double>::infinity();
  for (double v : values) {
    if (std::isnan(v)) continue;
    ++e.n;
    sum += v;
    e.min = std::min(e.min, v);
    e.max = std::max(e.max, v);
  }
  if (e.n == 0) return Estimate{0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  e.mean = sum / static_cast<double>(e.n);
  // Two passes: the textbook one-pass formula loses everything to cancellation when the values
  // are large and close (a million deliveries, give or take ten).
  double squares = 0;
  for (double v : values) {
    if (!std::isnan(v)) squares += (v - e.mean) * (v - e.mean);
  }
  if (e.n < 2) {
    e.stddev = e.ci_low = e.ci_high = kNaN;
    return e;
  }
  e.stddev = std::sqrt(squares / static_cast<double>(e.n - 1));
  const boost::math::students_t t(static_cast<double>(e.n - 1));
  const double half = boost::math::quantile(t, 0.5 + confidence / 2) * e.stddev / std::sqrt(static_cast<double>(e.n));
  e.ci_low = e.mean - half;
  e.ci_high = e.mean + half;
  return e;
}

TailEstimate tail_estimate(const LatencyHistogram& pooled, std::span<const double> per_run, double q, double confidence) {
  RELAYSIM_ASSERT(q > 0 && q <= 1, "a quantile is in (0, 1]");
  RELAYSIM_ASSERT(confidence > 0 && confidence < 1, "a confidence is a probability");
  TailEstimate t;
  t.q = q;
  t.samples = pooled.count();
  if (t.samples == 0) return t;
  const double n = static_cast<double>(t.samples);
  const auto rank = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(q * n)), 1, t.samples);
  t.beyond = t.samples - rank;
  RELAYSIM_ASSERT(t.beyond < t.samples, "a quantile has at least one duration at or below it");
  t.value = to_seconds(pooled.quantile(q));
  const Estimate spread = estimate(per_run, confidence);
  t.runs = spread.n;
  // No interval is narrower than the histogram knows the quantile: one bucket either side.
  const auto width = [](double seconds) {
    return to_seconds(LatencyHistogram::bucket_width(std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds))));
  };
  if (spread.n >= 2) {
    const double half = std::hypot(spread.half_width(), width(t.value));
    t.ci_low = std::max(0.0, t.value - half);
    t.ci_high = t.value + half;
    return t;
  }
  // The number of durations at or below the true quantile is Binomial(n, q): the ranks that
  // many lie between, by its normal approximation, bound the quantile.
  t.independent = true;
  const double z = boost::math::quantile(boost::math::normal(), 0.5 + confidence / 2);
  const double sd = std::sqrt(n * q * (1 - q));
  const double low = std::floor(n * q - z * sd);
  const double high = std::ceil(n * q + z * sd) + 1;
  RELAYSIM_ASSERT(low < high, "a rank interval's low end is below its high end");
  if (low >= 1) {
    const double read = to_seconds(pooled.at_rank(static_cast<std::uint64_t>(low)));  // read inside its bucket
    t.ci_low = std::max(0.0, read - width(read));
  } else {
    t.ci_low = 0.0;
  }
  if (high <= n) {
    const double read = to_seconds(pooled.at_rank(static_cast<std::uint64_t>(high)));
    t.ci_high = read + width(read);
  } else {
    t.ci_high = std::numeric_limits<double>::infinity();
  }
  return t;
}

}  // namespace relaysim::sim
