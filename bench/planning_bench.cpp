// What capacity planning costs: a run's time series (its CSV written as the run goes) against the
// same run without one, and a sweep of many short runs on every core against the same sweep on
// one. Both measure the two sides interleaved, iteration by iteration, so the machine's own
// noise falls on both alike.
#include <benchmark/benchmark.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench.h"
#include "live/parallel.h"
#include "sim/report/series.h"
#include "sim/run.h"
#include "sim/loader.h"
#include "sim/webhook/spec.h"

namespace relaysim::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Writes the series and the records as `relaysim run --timeseries` does, to memory.
struct CsvSinks final : sim::SeriesSink, sim::RecordSink {
  std::ostringstream series, records;
  void row(const sim::SeriesWindow& w, std::span<const double> values) override { sim::write_series_row(series, w, values); }
  void record(const sim::EntityRecord& r) override { sim::write_record(records, r); }
};

// The healthy benchmark scenario's first `load_s` seconds, run without and with a time series
// (a row a minute, and the records): `overhead` is how much longer the second takes.
void BM_TimeSeriesOverhead(benchmark::State& state, double load_s) {
  sim::Scenario s = sim::load_scenario(source_dir() + "/bench/scenarios/healthy.yaml");
  cut_load(s, sim::webhook::spec_of(s).load, load_s, std::chrono::minutes(1));
  benchmark::DoNotOptimize(sim::run_scenario(s).events);  // warm: the first run pays for cold caches
  double without = 0, with = 0;
  for (auto _ : state) {
    Clock::time_point t = Clock::now();
    const sim::RunResult plain = sim::run_scenario(s);
    without += seconds_since(t);
    CsvSinks sinks;
    sim::RunOptions options;
    options.series = &sinks;
    options.records = &sinks;
    t = Clock::now();
    const sim::RunResult sampled = sim::run_scenario(s, std::move(options));
    with += seconds_since(t);
    if (!plain.pass() || sampled.fingerprint != plain.fingerprint) {
      state.SkipWithError("the run failed, or sampling changed it");
      return;
    }
    benchmark::DoNotOptimize(sinks.series.tellp());
  }
  state.counters["without_s"] = without / static_cast<double>(state.iterations());
  state.counters["with_s"] = with / static_cast<double>(state.iterations());
  state.counters["overhead"] = with / without - 1;
}

// `runs` short runs of the quickstart scenario (its first five minutes, each its own seed), as
// `relaysim sweep` runs them: on one thread, then on every core. Parallel efficiency is the one
// thread's time over (cores × every core's time): 1 when every core is busy the whole time.
void BM_SweepEfficiency(benchmark::State& state, int runs) {
  sim::Scenario s = sim::load_scenario(source_dir() + "/scenarios/quickstart.yaml");
  s.duration = std::chrono::minutes(5);
  std::vector<live::RunJob> jobs;
  for (int i = 0; i < runs; ++i) jobs.push_back({&s, static_cast<std::uint64_t>(i + 1)});
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  benchmark::DoNotOptimize(live::run_parallel(jobs, cores, true, "run"));  // warm
  double one = 0, all = 0;
  for (auto _ : state) {
    Clock::time_point t = Clock::now();
    benchmark::DoNotOptimize(live::run_parallel(jobs, 1, true, "run"));
    one += seconds_since(t);
    t = Clock::now();
    benchmark::DoNotOptimize(live::run_parallel(jobs, cores, true, "run"));
    all += seconds_since(t);
  }
  state.counters["runs"] = runs;
  state.counters["cores"] = cores;
  state.counters["runs_per_s"] = static_cast<double>(runs) * static_cast<double>(state.iterations()) / all;
  state.counters["efficiency"] = one / (cores * all);
}

}  // namespace

void register_planning_benchmarks() {
  benchmark::RegisterBenchmark("planning/timeseries_overhead", BM_TimeSeriesOverhead, quick() ? 60.0 : 600.0)
      ->Iterations(quick() ? 1 : 5)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("planning/sweep_efficiency", BM_SweepEfficiency, quick() ? 100 : 1000)
      ->Iterations(quick() ? 1 : 3)->UseRealTime()->Unit(benchmark::kMillisecond);
}

}  // namespace relaysim::bench
