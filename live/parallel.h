// Runs many independent scenario runs on a pool of threads, one run per thread at a time, with a
// progress line on stderr. Each run is the same single-threaded, deterministic run_scenario as
// `relaysim run`, so results do not depend on the number of threads. (The simulator itself never
// starts a thread: threads, like the wall clock, live in live/.)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/report/metric.h"
#include "sim/scenario/scenario.h"

namespace relaysim::sim {
struct RunResult;
}

namespace relaysim::live {

struct RunJob {
  const sim::Scenario* scenario = nullptr;
  std::uint64_t seed = 0;
};

struct RunOutcome {
  bool ran = false;  // false: a stop request came before the run finished, or before it began
  bool pass = false;
  std::string ending;
  std::vector<double> values;   // every metric of the system's table (NaN for a family)
  std::vector<double> targets;  // the metrics asked for by reference (a family's at its parameter)
};

// How many of the runs fit in memory at once: every run may hold its scenario's footprint, so
// `threads` of the largest must fit in `limit` bytes (0: no limit). Fewer threads when they do
// not (with a warning on stderr unless `quiet`); throws std::runtime_error when one run alone
// does not fit (a run that would be stopped for memory anyway is refused before the others run).
unsigned runs_at_once(const std::vector<RunJob>& jobs, unsigned threads, double limit, bool quiet, const std::string& what);

// Called as each run finishes, one call at a time, with the run's index in the jobs: for what a
// caller gathers from a run beyond its outcome, without keeping every run.
using EachRun = std::function<void(std::size_t job, const sim::RunResult& result)>;

// Throws std::runtime_error naming the run when one could not be run at all.
// `refs`: metrics to read by reference too (RunOutcome::targets), such as latency_p99.9_s.
// Ctrl-C or SIGTERM stops the runs where they are and starts no more: the outcomes of the runs
// that finished have `ran`, and stop_requested() (live/machine.h) stays true for the caller to
// report. A second one ends the process at once.
std::vector<RunOutcome> run_parallel(const std::vector<RunJob>& jobs, unsigned threads, bool quiet, const std::string& what,
                                     const std::vector<sim::MetricRef>& refs = {}, const EachRun& each = {});

}  // namespace relaysim::live
