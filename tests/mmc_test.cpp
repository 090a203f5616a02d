// The M/M/c model: the kernel's answer against queueing theory, and against the hand-written loop
// the benchmarks compare it with (the comparison is only fair if both do the same work).
#include <gtest/gtest.h>

#include "bench/mmc_reference.h"
#include "sim/queueing/mmc.h"

namespace relaysim::sim {
namespace {

TEST(Mmc, MeanWaitApproachesErlangC) {
  // rho = 0.8; 400k customers put the sample mean within a few percent at any seed.
  const MmcParams p{8.0, 1.0, 10, 400'000, 7};
  const MmcResult r = run_mmc(p);
  EXPECT_EQ(r.customers, p.customers);
  EXPECT_NEAR(r.mean_wait_s, erlang_c_wait(p.lambda, p.mu, p.servers), 0.05 * erlang_c_wait(p.lambda, p.mu, p.servers));
}

TEST(Mmc, ErlangCMatchesKnownValues) {
  // M/M/1: Wq = rho / (mu - lambda).
  EXPECT_NEAR(erlang_c_wait(0.5, 1.0, 1), 1.0, 1e-12);
  // M/M/2 with a = 1: P(wait) = 1/3, Wq = (1/3) / (2 - 1).
  EXPECT_NEAR(erlang_c_wait(1.0, 1.0, 2), 1.0 / 3.0, 1e-12);
}

TEST(Mmc, TheHandWrittenLoopDoesExactlyTheSameWork) {
  for (std::uint32_t c : {1u, 4u, 32u}) {
    const MmcParams p{0.9 * c, 1.0, c, 50'000, 11};
    const MmcResult kernel = run_mmc(p);
    const MmcResult loop = bench::run_mmc_reference(p);
    EXPECT_EQ(kernel.customers, loop.customers);
    EXPECT_EQ(kernel.events, loop.events);
    EXPECT_EQ(kernel.mean_wait_s, loop.mean_wait_s);  // bit for bit
    EXPECT_EQ(kernel.end_s, loop.end_s);
  }
}

}  // namespace
}  // namespace relaysim::sim
