// The queueing formulas against published vectors (pyworkforce's staffing tests, Ciw's M/M/3,
// computed tables) and against themselves (Little's law, limits).
#include <gtest/gtest.h>

#include <cmath>

#include "sim/queueing/erlang.h"

namespace relaysim::sim::queueing {
namespace {

TEST(Erlang, BAndCByTheirRecursion) {
  EXPECT_NEAR(erlang_b(2.0, 3), 4.0 / 19.0, 1e-12);           // a^c/c! / sum: (8/6) / (1+2+2+8/6)
  EXPECT_NEAR(erlang_c(2.0, 3), 4.0 / 9.0, 1e-12);            // Ciw's M/M/3, λ = 0.2, μ = 0.1
  EXPECT_NEAR(Station({0.2, 10.0, 3}).mean_wait_s(), 40.0 / 9.0, 1e-9);  // Wq = 4.444
  EXPECT_NEAR(Station({5, 1.0 / 8, 1}).mean_wait_s(), 5.0 / (8.0 * 3.0), 1e-12);  // M/M/1: ρ/(μ−λ) = 0.2083
  EXPECT_TRUE(std::isfinite(erlang_c(950.0, 1000)));          // no factorial overflows
}

// pyworkforce's test: 100 calls per 30 minutes, 3 minutes each (a = 10 Erlangs), answered within
// 0.33 minutes for 80 % of calls: 14 agents, with service level 0.888 and P(wait) 0.174.
TEST(Erlang, PublishedStaffingVector) {
  const Station s{100.0 / 1800.0, 180.0, 1};
  const auto meets = [](const Station& x) { return 1 - x.wait_tail(0.33 * 60) >= 0.8; };
  const auto c = least_servers(s, 100, meets);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(*c, 14u);
  Station at = s;
  at.c = 14;
  EXPECT_NEAR(at.p_wait(), 0.1741, 5e-4);
  EXPECT_NEAR(1 - at.wait_tail(0.33 * 60), 0.8879, 5e-4);
  EXPECT_NEAR(at.utilisation(), 0.714, 1e-3);
}

// λ = 1000/s, S = 50 ms (a = 50): c = 55 gives C = .385, Wq = 3.85 ms; c = 60 gives C = .117.
TEST(Erlang, ComputedTable) {
  Station s{1000, 0.05, 55};
  EXPECT_NEAR(s.p_wait(), 0.385, 2e-3);
  EXPECT_NEAR(s.mean_wait_s(), 0.00385, 3e-5);
  s.c = 60;
  EXPECT_NEAR(s.p_wait(), 0.117, 2e-3);
}

TEST(Erlang, SojournTailIsAProperDistribution) {
  const Station s{8, 1.0, 10};
  EXPECT_DOUBLE_EQ(s.sojourn_tail(0), 1.0);
  double last = 1.0;
  for (double t = 0.1; t < 30; t += 0.1) {
    const double p = s.sojourn_tail(t);
    EXPECT_LE(p, last + 1e-15);
    last = p;
  }
  EXPECT_LT(last, 1e-6);
  // Its mean, integrated, is the mean wait plus the mean service.
  double mean = 0;
  for (double t = 0; t < 60; t += 1e-3) mean += s.sojourn_tail(t + 5e-4) * 1e-3;
  EXPECT_NEAR(mean, s.mean_sojourn_s(), 1e-4);
  EXPECT_NEAR(s.sojourn_tail(s.sojourn_quantile(0.99)), 0.01, 1e-9);
}

TEST(Erlang, WaitQuantileInvertsTheWaitTail) {
  Station s{24, 0.5, 14};  // a = 12: C(14, 12) = 0.4817, so 51.8 % never wait
  EXPECT_EQ(s.wait_quantile(0.5), 0.0);
  EXPECT_NEAR(s.wait_tail(s.wait_quantile(0.9)), 0.1, 1e-12);
  EXPECT_NEAR(s.wait_quantile(0.9), 0.39304, 1e-5);
}

TEST(Erlang, ConstantServiceHalvesTheWait) {
  Station s{0.8, 1.0, 1, 1, 0};  // M/D/1: Pollaczek-Khinchine, Wq = ρ / (2 μ (1 − ρ)) = 2
  EXPECT_NEAR(s.mean_wait_s(), 2.0, 1e-12);
  EXPECT_NEAR(fluid_drain_s(3600, 0.8), 4 * 3600, 1e-9);
}

}  // namespace
}  // namespace relaysim::sim::queueing
