// Latency sampling: log-normal through a median and a 99th percentile, in virtual nanoseconds.
#pragma once

#include "model/core/random.h"
#include "model/core/time.h"
#include "sim/scenario/scenario.h"

namespace relaysim::sim {

class Latency {
 public:
  explicit Latency(const LatencySpec& spec);
  Duration sample(Rng& rng) const;

 private:
  double mu_;     // ln(p50 in ns)
  double sigma_;  // ln(p99 / p50) / z(0.99)
  double cap_;    // the longest latency drawn, in ns
};

}  // namespace relaysim::sim
