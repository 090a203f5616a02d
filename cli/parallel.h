// Runs many independent scenario runs on a pool of threads, one run per thread at a time, with a
// progress line on stderr. Each run is the same single-threaded, deterministic run_scenario as
// `relaysim run`, so results do not depend on the number of threads. (The simulator itself never
// starts a thread: this is the command line's.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/report/metric.h"
#include "sim/scenario/scenario.h"

namespace relaysim::cli {

struct RunJob {
  const sim::Scenario* scenario = nullptr;
  std::uint64_t seed = 0;
};

struct RunOutcome {
  bool pass = false;
  std::string ending;
  std::vector<double> values;   // every metric of the system's table (NaN for a family)
  std::vector<double> targets;  // the metrics asked for by reference (a family's at its parameter)
};

// Throws std::runtime_error naming the run when one could not be run at all.
// `refs`: metrics to read by reference too (RunOutcome::targets), such as latency_p99.9_s.
std::vector<RunOutcome> run_parallel(const std::vector<RunJob>& jobs, unsigned threads, bool quiet, const std::string& what,
                                     const std::vector<sim::MetricRef>& refs = {});

}  // namespace relaysim::cli
