// The whole outbox relay — business operations, shards, leaders, the log, consumers, the
// downstream's inbox, oracle — on outbox-quickstart's load (bench/scenarios/outbox-healthy.yaml)
// on both stores; and what one pending outbox row costs in memory.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

#include "bench/bench.h"
#include "model/outbox/memory_store.h"
#include "sim/outbox/metrics.h"
#include "sim/outbox/spec.h"
#include "sim/loader.h"

namespace relaysim::bench {
namespace {

// Runs the scenario at `path` with its load cut to `load_s` seconds and the run `drain` longer.
// Simulated messages per wall second = outbox messages committed / wall time.
void BM_OutboxPipeline(benchmark::State& state, const std::string& path, sim::StoreKind store, double load_s,
                       Duration drain) {
  sim::Scenario s = sim::load_scenario(source_dir() + "/" + path);
  cut_load(s, sim::outbox::spec_of(s).load, load_s, drain);
  const std::optional<sim::RunResult> r = run_each_iteration(state, s, store);
  if (!r) return;
  count_messages(state, *r, r->value(sim::outbox::metric("messages")));
}

// A backlog of `n` pending outbox rows in one shard's in-memory store, committed as the load
// makes them (one business operation per row: the entity written, its row added, over 20 000
// entities): the row, its place in the pending queue, its entity's list of unfinished rows and
// the entity's version. Measured as heap growth.
void BM_BytesPerOutboxRow(benchmark::State& state) {
  using namespace relaysim::outbox;
  const auto n = static_cast<std::uint64_t>(state.range(0));
  double bytes = 0;
  for (auto _ : state) {
    const std::size_t before = heap_in_use();
    {
      relaysim::outbox::MemoryStore store;
      for (std::uint64_t i = 0; i < n; ++i) {
        const EntityKey key = 1 + i % 20'000;
        store.begin(Time{} + std::chrono::microseconds(static_cast<std::int64_t>(i) * 2000));
        NewMessage m;
        m.key = key;
        m.bucket = static_cast<std::uint32_t>(key % 1024);
        m.version = store.write_entity(key);
        store.add(m);
        store.commit();
      }
      bytes = static_cast<double>(heap_in_use() - before) / static_cast<double>(n);
      benchmark::DoNotOptimize(store);
    }
  }
  state.counters["bytes_per_pending"] = bytes;
}

}  // namespace

void register_outbox_benchmarks() {
  const int repetitions = quick() ? 1 : 3;
  const double memory_s = quick() ? 600 : 2400;  // about 297k / 1.19M messages
  const double sqlite_s = quick() ? 60 : 240;    // about 30k / 119k messages
  const std::string healthy = "bench/scenarios/outbox-healthy.yaml";
  benchmark::RegisterBenchmark("outbox/healthy/memory", BM_OutboxPipeline, healthy, sim::StoreKind::memory, memory_s,
                               std::chrono::minutes(5))
      ->Iterations(1)->Repetitions(repetitions)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("outbox/healthy/sqlite", BM_OutboxPipeline, healthy, sim::StoreKind::sqlite, sqlite_s,
                               std::chrono::minutes(5))
      ->Iterations(1)->Repetitions(repetitions)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("memory/bytes_per_outbox_row", BM_BytesPerOutboxRow)
      ->Arg(quick() ? 200'000 : 1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond);
}

}  // namespace relaysim::bench
