// Sweeps: one scenario run over a grid of values (`--vary webhook.platform.pods=2..16`) and
// replications (seeds), each run single-threaded and deterministic, tabulated as the mean of every
// metric with its 95 % confidence interval at each point of the grid.
//
// A sweep too big for one machine is cut into shards (`--shard I/N`): shard I runs the runs whose
// index is I-1 modulo N, so every shard gets a fair share of the grid. Each shard writes its raw
// runs; merging them yields exactly the table the whole sweep gives, because the table is always
// computed from the raw runs as written, in run order. Nothing here reads a clock or starts a
// thread: the command line runs the runs in parallel.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/assert.h"
#include "sim/plan/stats.h"
#include "sim/report/metric.h"
#include "sim/loader.h"

namespace relaysim::sim {

// One dimension of the grid: a key path of the scenario and the values it takes, as written.
// The largest sweep: points of the grid (a grid beyond this is a typo: 2..2000000), and runs
// (points x replications).
inline constexpr std::size_t kMaxPoints = 1'000'000;
inline constexpr std::size_t kMaxRuns = 10'000'000;

struct Axis {
  std::string path;
  std::vector<std::string> values;
  bool operator==(const Axis&) const = default;
};
// "path=2..16" (whole numbers, step 1), "path=2..16:2" (a step), "path=1m,5m,15m" (a list of YAML
// values, each once). Throws ScenarioError (file `origin`: "--vary", or plan's "--range") when it
// is none of these.
Axis parse_axis(std::string_view text, const std::string& origin = "--vary");

struct SweepPlan {
  std::string file;                 // the scenario file, as named
  std::string system;               // its system
  std::uint64_t scenario_hash = 0;  // of the scenario as written: shards of one sweep agree on it
  std::vector<Axis> axes;
  std::uint32_t replications = 5;
  std::uint64_t seed = 1;           // replication r runs with seed + r
  std::vector<std::string> metrics; // the system's metrics, in its table's order (families left out)
  std::vector<std::string> expected;  // the metrics the scenario's expect: names (what a table shows first)
  std::vector<std::string> shown;     // the metrics `--show` named (what the report charts beside those)
  std::uint32_t shard = 1;          // 1-based: this part runs the runs with index % shards == shard - 1
  std::uint32_t shards = 1;

  std::size_t points() const;
  std::size_t runs() const { return points() * replications; }
  bool mine(std::size_t run) const {
    RELAYSIM_ASSERT(shard >= 1 && shard <= shards, "a shard of the sweep");
    return run % shards == shard - 1;
  }
  std::size_t point_of(std::size_t run) const {
    RELAYSIM_ASSERT(replications > 0, "a point runs at least once");
    return run / replications;
  }
  std::uint32_t replication_of(std::size_t run) const {
    RELAYSIM_ASSERT(replications > 0, "a point runs at least once");
    return static_cast<std::uint32_t>(run % replications);
  }
  std::uint64_t seed_of(std::size_t run) const { return seed + replication_of(run); }
  // The value of each axis at `point` (the first axis varies slowest), as --set overrides.
  std::vector<Override> overrides(std::size_t point) const;

  // The metrics that are a percentile of the latency every run's groups pool (latency_p99_s:
  // the metric's index and its quantile, 0.99), which get a tail estimate besides their mean.
  struct Tail {
    std::size_t metric = 0;
    double q = 0;
  };
  std::vector<Tail> tails() const;

  // sweep.json: everything that defines the sweep, and which shard this is.
  nlohmann::json to_json() const;
  static SweepPlan from_json(const nlohmann::json& j);  // throws std::runtime_error with the reason
  // Do `a` and `b` define the same sweep (shards aside)?
  static bool same_sweep(const SweepPlan& a, const SweepPlan& b);
};

// One run of a sweep, as runs.csv holds it.
struct SweepRun {
  std::size_t run = 0;
  bool pass = false;
  std::string ending;          // finished, drained, ...
  std::vector<double> values;  // every metric of the plan, in order (NaN: n/a)
};

// runs.csv: run, point, replication, seed, the axes' values, pass, ending, then every metric, with
// 17 significant digits, so a value read back is the value written.
void write_runs_header(std::ostream& out, const SweepPlan& plan);
void write_run(std::ostream& out, const SweepPlan& plan, const SweepRun& r);
// Reads runs.csv written for `plan`; throws std::runtime_error naming the line when it is not.
std::vector<SweepRun> read_runs(std::istream& in, const SweepPlan& plan, const std::string& name);

// The latency of every run of each point, pooled: what a tail percentile is read from. A sweep
// of more points than kMaxPooledPoints pools nothing (its tails are the runs' means alone).
inline constexpr std::size_t kMaxPooledPoints = 20'000;
using PooledLatency = std::vector<LatencyHistogram>;  // by point; empty: not pooled
// latency.csv: `point,latency`, one row per point some run of it pooled into, the latency as
// LatencyHistogram::encode writes it. Merging shards adds their rows up, point by point.
void write_pooled(std::ostream& out, const PooledLatency& pooled);
// Adds the rows of latency.csv written for `plan` into `pooled` (sized to the plan's points);
// throws std::runtime_error naming the line when it is not such a file.
void read_pooled(std::istream& in, const SweepPlan& plan, const std::string& name, PooledLatency& pooled);

// One point of the grid, over its replications.
struct SweepPoint {
  std::size_t point = 0;
  std::vector<std::string> values;   // each axis's value
  std::uint32_t runs = 0;
  std::uint32_t passed = 0;          // runs whose invariants and expectations all held
  std::vector<Estimate> metrics;     // in the plan's order
  std::vector<TailEstimate> tails;   // for each of plan.tails(), when the latency was pooled
};

// The table of a whole sweep: every run of every point must be in `runs`, each once.
std::vector<SweepPoint> summarize(const SweepPlan& plan, std::vector<SweepRun> runs, const PooledLatency& pooled);
// summary.csv, one row per point and metric ("tidy", as pandas and gnuplot like it): point, the
// axes' values, metric, n, mean, stddev, ci95_low, ci95_high, min, max.
void write_summary_csv(std::ostream& out, const SweepPlan& plan, const std::vector<SweepPoint>& points);
// tails.csv, one row per point and tail metric: point, the axes' values, metric, samples, beyond,
// runs, pooled, ci95_low, ci95_high, method (TailEstimate).
void write_tails_csv(std::ostream& out, const SweepPlan& plan, const std::vector<SweepPoint>& points);
nlohmann::json summary_json(const SweepPlan& plan, const std::vector<SweepPoint>& points);

}  // namespace relaysim::sim
