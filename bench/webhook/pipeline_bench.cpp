// The whole webhook pipeline — load, ingest, store, dispatcher, resolver, world, oracle — on the
// two benchmark scenarios and both stores, and on the first minutes of the day-long scenario; and
// what one pending request costs in memory.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <string>

#include "bench/bench.h"
#include "model/webhook/memory_store.h"
#include "sim/run.h"
#include "sim/loader.h"
#include "sim/webhook/metrics.h"
#include "sim/webhook/spec.h"

namespace relaysim::bench {
namespace {

// Seconds of load in a scenario's load segments.
double load_seconds(const sim::Scenario& s) {
  double total = 0;
  for (const auto& segment : sim::webhook::spec_of(s).load) total += to_seconds(segment.arrivals.to - segment.arrivals.from);
  return total;
}

// Runs the scenario at `path` (relative to the source tree) with its load cut to `load_s` seconds
// and the run `drain` longer, so the tail drains. Simulated requests per wall second = ingested /
// wall time. `full_run_s_estimate`: the wall time the whole scenario would take at this pace (for
// the day-long scenario, whose real run takes minutes and is only timed by `./relaysim bench`).
void BM_Pipeline(benchmark::State& state, const std::string& path, sim::StoreKind store, double load_s,
                 Duration drain) {
  sim::Scenario s = sim::load_scenario(source_dir() + "/" + path);
  const double full_load_s = load_seconds(s);
  const Duration load = Duration{static_cast<std::int64_t>(load_s * 1e9)};
  for (auto& segment : sim::webhook::spec_of(s).load) segment.arrivals.to = std::min(segment.arrivals.to, Time{} + load);
  s.duration = load + drain;
  const double scale = full_load_s / load_seconds(s);
  const std::optional<sim::RunResult> r = run_each_iteration(state, s, store);
  if (!r) return;
  const double ingested = r->value(sim::webhook::metric("ingested"));
  const auto events = static_cast<double>(r->events);
  state.counters["requests"] = ingested;
  state.counters["requests_per_s"] = benchmark::Counter(ingested, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsIterationInvariantRate);
  // Inverted rate of 1/scale: wall seconds per run times scale.
  state.counters["full_run_s_estimate"] = benchmark::Counter(
      1.0 / scale, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// A backlog of `n` pending requests in the in-memory store, with keys and payloads shaped like
// the load generator's ("cx123", "r4567", {"seq":4567}). Measured as heap growth (glibc's
// mallinfo2), so it counts the rows, their text, both indexes and both heaps.
void BM_BytesPerPendingRequest(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  double bytes = 0;
  for (auto _ : state) {
    const std::size_t before = heap_in_use();
    {
      relaysim::webhook::MemoryStore store(std::chrono::minutes(1));
      std::string cxid, request, payload;
      for (std::uint64_t i = 0; i < n; ++i) {
        cxid.assign("cx").append(std::to_string(i % 1000));
        request.assign("r").append(std::to_string(i));
        payload.assign("{\"seq\":").append(std::to_string(i)).append("}");
        const Time t = Time{} + Duration{static_cast<std::int64_t>(i) * 1000};
        store.create({cxid, request, payload, t, t + std::chrono::hours(24)});
      }
      bytes = static_cast<double>(heap_in_use() - before) / static_cast<double>(n);
      benchmark::DoNotOptimize(store);
    }
  }
  state.counters["bytes_per_pending"] = bytes;
}

}  // namespace

void register_pipeline_benchmarks() {
  const int repetitions = quick() ? 1 : 3;
  const double memory_s = quick() ? 120 : 600;   // 120k / 600k requests
  const double sqlite_s = quick() ? 15 : 60;     // 15k / 60k requests
  for (const char* name : {"healthy", "faulty"}) {
    const std::string path = std::string("bench/scenarios/") + name + ".yaml";
    benchmark::RegisterBenchmark((std::string("pipeline/") + name + "/memory").c_str(), BM_Pipeline, path,
                                 sim::StoreKind::memory, memory_s, std::chrono::minutes(1))
        ->Iterations(1)->Repetitions(repetitions)->UseRealTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("pipeline/") + name + "/sqlite").c_str(), BM_Pipeline, path,
                                 sim::StoreKind::sqlite, sqlite_s, std::chrono::minutes(1))
        ->Iterations(1)->Repetitions(repetitions)->UseRealTime()->Unit(benchmark::kMillisecond);
  }
  // The day-long scenario's first minutes (its retries get half an hour to finish), extrapolated
  // to the whole day: the figure --quick can give for the <= 3 minute target.
  benchmark::RegisterBenchmark("pipeline/day/memory", BM_Pipeline,
                               std::string("scenarios/flaky-endpoints-1k-24h.yaml"), sim::StoreKind::memory,
                               quick() ? 900.0 : 1800.0, std::chrono::minutes(30))
      ->Iterations(1)->Repetitions(repetitions)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("memory/bytes_per_pending_request", BM_BytesPerPendingRequest)
      ->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond);
}

}  // namespace relaysim::bench
