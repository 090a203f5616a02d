#include "sim/plan/stats.h"

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

}  // namespace relaysim::sim
