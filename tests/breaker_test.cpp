#include <gtest/gtest.h>

#include <vector>

#include "model/resilience/breaker.h"

namespace relaysim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

BreakerConfig config() {
  BreakerConfig c;
  c.window = seconds(10);
  c.min_calls = 5;
  c.failure_rate = 0.5;
  c.open_for = seconds(30);
  c.half_open_probes = 2;
  return c;
}

void fail_n(CircuitBreaker& b, int n, Time at) {
  for (int i = 0; i < n; ++i) {
    const Permit p = b.acquire(at);
    ASSERT_TRUE(p.admitted);
    b.record(p, false, at);
  }
}

TEST(Breaker, NeverOpensBelowTheMinimumCallCount) {
  CircuitBreaker b(config());
  fail_n(b, 4, Time{} + seconds(1));
  EXPECT_EQ(b.state(), BreakerState::closed);
  fail_n(b, 1, Time{} + seconds(1));
  EXPECT_EQ(b.state(), BreakerState::open);
}

TEST(Breaker, OpensOnlyAtTheFailureRate) {
  CircuitBreaker b(config());
  const Time t = Time{} + seconds(1);
  for (int i = 0; i < 6; ++i) b.record(b.acquire(t), true, t);
  fail_n(b, 5, t);  // 5 / 11 < 50 %
  EXPECT_EQ(b.state(), BreakerState::closed);
  fail_n(b, 1, t);  // 6 / 12 = 50 %
  EXPECT_EQ(b.state(), BreakerState::open);
}

TEST(Breaker, FailuresOutsideTheWindowDoNotCount) {
  CircuitBreaker b(config());
  fail_n(b, 4, Time{} + seconds(1));
  fail_n(b, 4, Time{} + seconds(30));  // the first four have left the 10 s window
  EXPECT_EQ(b.state(), BreakerState::closed);
}

TEST(Breaker, OpenRejectsUntilOpenForThenAdmitsBoundedProbes) {
  std::vector<std::pair<BreakerState, BreakerState>> changes;
  CircuitBreaker b(config(), [&](BreakerState from, BreakerState to, Time) { changes.emplace_back(from, to); });
  const Time t0 = Time{} + seconds(1);
  fail_n(b, 5, t0);
  EXPECT_FALSE(b.acquire(t0 + seconds(29)).admitted);
  const Permit p1 = b.acquire(t0 + seconds(30));
  const Permit p2 = b.acquire(t0 + seconds(30));
  const Permit p3 = b.acquire(t0 + seconds(30));
  EXPECT_TRUE(p1.admitted);
  EXPECT_TRUE(p2.admitted);
  EXPECT_FALSE(p3.admitted);  // only half_open_probes at once
  EXPECT_EQ(b.state(), BreakerState::half_open);
  b.record(p1, true, t0 + seconds(31));
  b.record(p2, true, t0 + seconds(31));
  EXPECT_EQ(b.state(), BreakerState::closed);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].second, BreakerState::open);
  EXPECT_EQ(changes[1].second, BreakerState::half_open);
  EXPECT_EQ(changes[2].second, BreakerState::closed);
}

TEST(Breaker, AProbeFailureReopens) {
  CircuitBreaker b(config());
  const Time t0 = Time{} + seconds(1);
  fail_n(b, 5, t0);
  const Permit p = b.acquire(t0 + seconds(30));
  b.record(p, false, t0 + seconds(31));
  EXPECT_EQ(b.state(), BreakerState::open);
  EXPECT_FALSE(b.acquire(t0 + seconds(32)).admitted);
}

TEST(Breaker, LateResultsFromAnOlderGenerationChangeNothing) {
  CircuitBreaker b(config());
  const Time t0 = Time{} + seconds(1);
  const Permit slow = b.acquire(t0);  // admitted while closed
  fail_n(b, 5, t0);                   // opens
  const Permit probe = b.acquire(t0 + seconds(30));
  ASSERT_EQ(b.state(), BreakerState::half_open);
  b.record(slow, false, t0 + seconds(30));  // the slow closed-era failure arrives late
  EXPECT_EQ(b.state(), BreakerState::half_open);
  EXPECT_EQ(b.probes_in_flight(), 1u);
  b.record(probe, true, t0 + seconds(31));
  EXPECT_EQ(b.state(), BreakerState::half_open);  // one success of two needed
}

TEST(Breaker, ALostProbeFreesItsSlot) {
  CircuitBreaker b(config());
  const Time t0 = Time{} + seconds(1);
  fail_n(b, 5, t0);
  const Permit p1 = b.acquire(t0 + seconds(30));
  const Permit p2 = b.acquire(t0 + seconds(30));
  ASSERT_FALSE(b.acquire(t0 + seconds(30)).admitted);
  b.release(p1);
  EXPECT_TRUE(b.acquire(t0 + seconds(30)).admitted);
  (void)p2;
}

}  // namespace
}  // namespace relaysim
