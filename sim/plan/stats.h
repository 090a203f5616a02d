// Estimates across replications: the mean of a figure over independent runs (different seeds),
// with a Student-t confidence interval, as a planner reads "p99 = 12.3 s ± 0.8 s (95 %)".
#pragma once

#include <cstddef>
#include <span>

namespace relaysim::sim {

struct Estimate {
  std::size_t n = 0;      // replications with a value (a figure that is n/a in a run is left out)
  double mean = 0;
  double stddev = 0;      // sample standard deviation (n - 1)
  double ci_low = 0;      // the confidence interval of the mean; with n < 2, NaN
  double ci_high = 0;
  double min = 0;
  double max = 0;
  double half_width() const { return (ci_high - ci_low) / 2; }
  // The half-width relative to the mean: the precision JMT stops at (0.03 and below is tight).
  double relative_precision() const;
};

// `values` may hold NaNs (n/a); they are left out. `confidence` in (0, 1).
Estimate estimate(std::span<const double> values, double confidence = 0.95);

}  // namespace relaysim::sim
