// The simulation kernel alone: the classic hold model, and M/M/c through the kernel against the
// same M/M/c as a hand-written priority-queue loop.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "bench/bench.h"
#include "bench/mmc_reference.h"
#include "model/core/random.h"
#include "sim/kernel/event_queue.h"
#include "sim/kernel/kernel.h"
#include "sim/queueing/mmc.h"

namespace relaysim::bench {
namespace {

using sim::Kernel;

// Hold model: N events pending; each run pops the earliest and schedules one more at an
// exponentially distributed time later, so the queue size stays N.
struct Hold {
  Kernel* kernel;
  Rng* rng;
  void operator()() const {
    kernel->after(Duration{1 + static_cast<std::int64_t>(rng->exponential(1e6))}, *this);
  }
};

// `Buckets` false: the kernel on a 4-ary heap at every size (the kernel before the radix
// buckets), so the two are measured side by side in one run.
template <bool Buckets>
void BM_KernelHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  Kernel kernel = Buckets ? Kernel() : Kernel(sim::EventQueue(static_cast<std::size_t>(-1)));
  Rng rng(42);
  for (std::size_t i = 0; i < pending; ++i) {
    kernel.after(Duration{1 + static_cast<std::int64_t>(rng.exponential(1e6))}, Hold{&kernel, &rng});
  }
  for (auto _ : state) kernel.step();
  state.counters["pending"] = static_cast<double>(kernel.pending());
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// The same hold model on the event queue alone (no actions, no slots), with the queue's buckets
// and without them (a 4-ary heap at every size, as the kernel had before): what the structure
// itself wins, measured side by side in one run.
template <bool Buckets>
void BM_QueueHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  sim::EventQueue queue = Buckets ? sim::EventQueue() : sim::EventQueue(static_cast<std::size_t>(-1));
  Rng rng(42);
  std::uint64_t seq = 0;
  const auto delay = [&rng] { return 1 + static_cast<std::int64_t>(rng.exponential(1e6)); };
  for (; seq < pending; ++seq) queue.push(sim::QueuedEvent{delay(), seq, 0, 0});
  for (auto _ : state) {
    const std::int64_t now = queue.top()->time_ns;
    queue.pop();
    queue.push(sim::QueuedEvent{now + delay(), seq++, 0, 0});
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

sim::MmcParams mmc_params() {
  sim::MmcParams p;
  p.lambda = 9.0;
  p.mu = 1.0;
  p.servers = 10;
  p.customers = quick() ? 200'000 : 1'000'000;
  p.seed = 1;
  return p;
}

template <sim::MmcResult (*Run)(const sim::MmcParams&)>
void BM_Mmc(benchmark::State& state) {
  const sim::MmcParams p = mmc_params();
  sim::MmcResult r;
  for (auto _ : state) {
    r = Run(p);
    benchmark::DoNotOptimize(r);
  }
  state.counters["customers_per_s"] =
      benchmark::Counter(static_cast<double>(r.customers), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["mean_wait_s"] = r.mean_wait_s;
  state.counters["erlang_c_wait_s"] = sim::erlang_c_wait(p.lambda, p.mu, p.servers);
}

// A hold benchmark at 100, 10^4 and 10^6 pending. A million pending runs half a second even with
// --quick: a shorter run is mostly the first spreads of the freshly filled queue, not the steady
// state its ratios are about (with 0.05 s both ratios came out at 1.9-2.8, not 3.4-4.5).
template <class Fn>
void register_hold(const char* name, Fn fn, double min_time) {
  benchmark::RegisterBenchmark(name, fn)->Arg(100)->Arg(10'000)->MinTime(min_time)->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark(name, fn)->Arg(1'000'000)->MinTime(std::max(min_time, 0.5))->Unit(benchmark::kNanosecond);
}

}  // namespace

void register_kernel_benchmarks() {
  const double min_time = quick() ? 0.05 : 0.5;
  register_hold("kernel/hold", BM_KernelHold<true>, min_time);
  register_hold("kernel/hold/heap_only", BM_KernelHold<false>, min_time);
  register_hold("event_queue/hold/buckets", BM_QueueHold<true>, min_time);
  register_hold("event_queue/hold/heap_only", BM_QueueHold<false>, min_time);
  benchmark::RegisterBenchmark("mmc/kernel", BM_Mmc<sim::run_mmc>)->MinTime(min_time)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("mmc/hand_written_loop", BM_Mmc<run_mmc_reference>)
      ->MinTime(min_time)->Unit(benchmark::kMillisecond);
}

}  // namespace relaysim::bench
