// Shared by the benchmark files: the --quick switch and the source tree's location.
#pragma once

#include <benchmark/benchmark.h>
#include <malloc.h>

#include <optional>
#include <string>

#include "sim/run.h"

namespace relaysim::bench {

// `relaysim_bench --quick` (what CI runs as a smoke test): every figure, on smaller sizes.
bool quick();

inline std::string source_dir() { return RELAYSIM_SOURCE_DIR; }

// Bytes the heap holds now (glibc's mallinfo2): what a structure costs is the growth across
// building it.
inline std::size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
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

}  // namespace relaysim::bench
