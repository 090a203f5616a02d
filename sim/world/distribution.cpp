#include "sim/world/distribution.h"

#include <algorithm>
#include <cmath>

namespace relaysim::sim {

Latency::Latency(const LatencySpec& spec) {
  const double p50 = std::max(1.0, static_cast<double>(spec.p50.count()));
  const double p99 = std::max(p50, static_cast<double>(spec.p99.count()));
  mu_ = std::log(p50);
  sigma_ = std::log(p99 / p50) / 2.3263478740408408;  // z for the 99th percentile
  // Cap at 1000x the median: a log-normal tail is unbounded, a network is not.
  cap_ = std::exp(mu_) * 1000.0;
}

Duration Latency::sample(Rng& rng) const {
  if (sigma_ == 0.0) return Duration{static_cast<std::int64_t>(std::exp(mu_))};
  const double ns = std::min(std::exp(mu_ + sigma_ * rng.normal()), cap_);
  return Duration{std::max<std::int64_t>(1, static_cast<std::int64_t>(ns))};
}

}  // namespace relaysim::sim
