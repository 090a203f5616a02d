// Shared by the benchmark files: the --quick switch and the source tree's location.
#pragma once

#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <optional>
#include <string>

#include "model/core/big_memory.h"
#include "sim/run.h"

namespace relaysim::bench {

// `relaysim_bench --quick` (what CI runs as a smoke test): every figure, on smaller sizes.
bool quick();

inline std::string source_dir() { return RELAYSIM_SOURCE_DIR; }

// Bytes the heap holds now (glibc's mallinfo2, and the blocks on huge pages of their own that it
// does not see): what a structure costs is the growth across building it.
inline std::size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd + big_pages_in_use();
}

// Runs `s` once per iteration on `store`; the last run's result, or nothing (and the benchmark
// marked failed) when a run broke an invariant or an expectation — a figure of a wrong run is no
// figure.
inline std::optional<sim::RunResult> run_each_iteration(benchmark::State& state, const sim::Scenario& s,
                                                        sim::StoreKind store) {
  std::optional<sim::RunResult> last;
  for (auto _ : state) {
    sim::RunOptions options;
    options.store = store;
    last = sim::run_scenario(s, std::move(options));
    if (!last->pass()) {
      state.SkipWithError("the run broke an invariant or an expectation; see `relaysim run`");
      return std::nullopt;
    }
  }
  return last;
}

// Cuts a scenario's load to its first `load_s` seconds (every segment of `segments`, which have
// `arrivals`) and the run to `drain` after that; load_s <= 0 leaves the scenario as it is.
template <class Segments>
void cut_load(sim::Scenario& s, Segments& segments, double load_s, Duration drain) {
  if (load_s <= 0) return;
  const Duration load = Duration{static_cast<std::int64_t>(load_s * 1e9)};
  for (auto& segment : segments) segment.arrivals.to = std::min(segment.arrivals.to, Time{} + load);
  s.duration = load + drain;
}

// The counters of a whole-pipeline benchmark: `messages` a run made, and messages and events per
// wall second.
inline void count_messages(benchmark::State& state, const sim::RunResult& r, double messages) {
  state.counters["messages"] = messages;
  state.counters["messages_per_s"] = benchmark::Counter(messages, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(r.events), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace relaysim::bench
