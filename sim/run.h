// run_scenario: one whole simulated run — store, world, oracle, metrics — and its verdict.
//
// The caller (the CLI, a test) owns everything outside virtual time: wall-clock timing and the
// progress display get a callback here and never a clock, so the run itself stays deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/core/function.h"
#include "sim/oracle/oracle.h"
#include "sim/report/metrics.h"
#include "sim/scenario/scenario.h"

namespace relaysim::sim {

struct RunOptions {
  std::optional<std::uint64_t> seed;         // overrides the scenario's
  std::optional<StoreKind> store;            // overrides the scenario's
  std::string sqlite_path = ":memory:";
  // Stop after this many events (a run that never ends is a livelock); 0 means no limit.
  std::uint64_t max_events = 0;
  // Called about every 1 % of virtual time with the current virtual time.
  InplaceFunction<void(Time now, std::uint64_t events), 32> progress;
};

struct ExpectationResult {
  std::string expr;
  bool ok = false;
  double actual = 0.0;
};

struct RunResult {
  Scenario scenario;                 // as run (seed and store overrides applied)
  std::uint64_t fingerprint = 0;
  Time end{};
  std::uint64_t events = 0;
  bool drained = false;              // the event queue ran dry before the duration
  bool hit_event_limit = false;      // stopped by RunOptions::max_events
  std::unique_ptr<Oracle> oracle;
  std::unique_ptr<Metrics> metrics;
  std::map<std::string, double> values;  // every metric of metric_catalog()
  std::vector<ExpectationResult> expectations;
  std::uint64_t unresolved = 0;
  // Nothing was left to do while requests were still open: the platform stopped making progress.
  bool stalled() const { return drained && unresolved > 0; }
  bool pass() const;
};

RunResult run_scenario(const Scenario& scenario, RunOptions options = {});

}  // namespace relaysim::sim
