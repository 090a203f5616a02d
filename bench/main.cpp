// relaysim_bench: Google Benchmark, plus one flag of its own, --quick, which registers smaller
// sizes of every benchmark so the whole set runs in well under two minutes.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "bench/bench.h"

namespace relaysim::bench {
namespace {
bool g_quick = false;
}
bool quick() { return g_quick; }
void register_kernel_benchmarks();
void register_pipeline_benchmarks();
void register_store_benchmarks();
void register_resilience_benchmarks();
void register_sms_benchmarks();
void register_outbox_benchmarks();
void register_planning_benchmarks();
}  // namespace relaysim::bench

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      relaysim::bench::g_quick = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 2;
  relaysim::bench::register_kernel_benchmarks();
  relaysim::bench::register_pipeline_benchmarks();
  relaysim::bench::register_store_benchmarks();
  relaysim::bench::register_resilience_benchmarks();
  relaysim::bench::register_sms_benchmarks();
  relaysim::bench::register_outbox_benchmarks();
  relaysim::bench::register_planning_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
