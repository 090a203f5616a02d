// Estimates across replications: the mean of a figure over independent runs (different seeds),
// with a Student-t confidence interval, as a planner reads "p99 = 12.3 s ± 0.8 s (95 %)".
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

#include "sim/report/histogram.h"

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

// A tail percentile over several runs. The mean of the runs' own p99s (what `estimate` gives over
// replications) answers "what p99 does a run see?"; a planner's "p99 < 30 s" is about the
// distribution of every request, so the point estimate here is the quantile of every run's
// durations pooled, which needs many samples: with fewer than ten beyond the quantile it is a
// guess, and `beyond` says how many there were.
//
// The interval is by sectioning (Asmussen and Glynn, Stochastic Simulation, 2007, IV.4; Nakayama,
// 2014): the pooled quantile ± Student's t over the replications times the spread of the runs'
// own quantiles / √R. It holds when the durations within a run are correlated, as a queue's
// waits are, which the textbook order-statistic interval does not. With one run there is no
// spread to take, and the interval is the distribution-free one of the order statistics around
// rank nq, which assumes independent durations (`independent` says so). Either way the interval
// is at least a bucket of the histogram wide on each side: the durations are kept to 0.39-0.78 %,
// and a narrower interval would claim a precision they do not have.
struct TailEstimate {
  double q = 0;               // the quantile, in (0, 1]: 0.99
  std::uint64_t samples = 0;  // durations pooled, every run
  std::uint64_t beyond = 0;   // of them, above the quantile's rank
  std::size_t runs = 0;       // runs with a figure
  double value = std::numeric_limits<double>::quiet_NaN();    // seconds
  double ci_low = std::numeric_limits<double>::quiet_NaN();   // NaN: no interval (one sample)
  double ci_high = std::numeric_limits<double>::quiet_NaN();  // +inf: beyond the largest sample
  bool independent = false;   // the interval assumes independent durations (one run)
  bool enough() const { return beyond >= 10; }
  std::string_view method() const { return independent ? "order statistics" : "sectioning"; }
};

// `pooled`: every run's durations together; `per_run`: each run's own q-quantile in seconds (NaN
// for a run with none). `confidence` in (0, 1).
TailEstimate tail_estimate(const LatencyHistogram& pooled, std::span<const double> per_run, double q, double confidence = 0.95);

}  // namespace relaysim::sim
