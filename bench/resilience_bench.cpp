// Decisions per second of the circuit breaker and of each rate-limiting algorithm.
#include <benchmark/benchmark.h>

#include <string>

#include "bench/bench.h"
#include "model/core/random.h"
#include "model/resilience/breaker.h"
#include "model/resilience/limiters.h"

namespace relaysim::bench {
namespace {

// A breaker over a ServiceB that fails 10 % of calls: acquire a permit, record the result.
void BM_BreakerDecision(benchmark::State& state) {
  CircuitBreaker breaker(BreakerConfig{});
  Rng rng(3);
  Time now = Time{} + std::chrono::seconds(1);
  std::uint64_t admitted = 0;
  for (auto _ : state) {
    now += std::chrono::microseconds(100);
    const Permit p = breaker.acquire(now);
    if (p.admitted) {
      ++admitted;
      breaker.record(p, !rng.chance(0.1), now);
    }
  }
  state.counters["decisions_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["admitted"] = static_cast<double>(admitted) / static_cast<double>(state.iterations());
}

// A 1000/s limiter (burst 50) asked 2000 times a second: half the answers are no. The argument
// is the algorithm; the sliding log's members are distinct, as message:attempt names are.
void BM_LimiterDecision(benchmark::State& state) {
  Limiter limiter(LimiterSpec{static_cast<LimiterAlgorithm>(state.range(0)), 1000, std::chrono::seconds(1), 50});
  state.SetLabel(std::string(to_string(limiter.spec().algorithm)));
  Time now = Time{} + std::chrono::seconds(1);
  std::uint64_t granted = 0;
  std::uint64_t member = 0;
  for (auto _ : state) {
    now += std::chrono::microseconds(500);
    granted += limiter.take(now, 1, ++member).admitted ? 1 : 0;
  }
  state.counters["decisions_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["granted"] = static_cast<double>(granted) / static_cast<double>(state.iterations());
}

}  // namespace

void register_resilience_benchmarks() {
  const double min_time = quick() ? 0.05 : 0.5;
  benchmark::RegisterBenchmark("resilience/breaker", BM_BreakerDecision)->MinTime(min_time);
  benchmark::RegisterBenchmark("resilience/limiter", BM_LimiterDecision)->DenseRange(0, 3)->MinTime(min_time);
}

}  // namespace relaysim::bench
