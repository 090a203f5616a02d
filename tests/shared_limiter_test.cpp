// A limit shared by pods through the simulated store (model/resilience/shared_limiter.h): the
// store decides while it answers; the policy, a breaker on the store and the local share decide
// when it does not.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "model/resilience/shared_limiter.h"
#include "sim/kernel/kernel.h"
#include "sim/world/kv.h"

namespace relaysim::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct Seen {
  Time asked;
  Time answered;
  SharedDecision d;
};

class SharedLimiterTest : public ::testing::Test {
 protected:
  void make(StoreDownPolicy policy, std::vector<Outage> outages, std::uint32_t pods = 3) {
    KvSpec spec;
    spec.latency = LatencySpec{milliseconds(2), milliseconds(2)};
    spec.outages = std::move(outages);
    kv = std::make_unique<SimKv>(spec, kernel, 1);
    kv->install();
    SharedLimitConfig c;
    c.spec = LimiterSpec{LimiterAlgorithm::sliding_log, 6, seconds(1), 0};
    c.when_down = policy;
    c.pods = pods;
    c.timeout = milliseconds(50);
    for (std::uint32_t p = 0; p < pods; ++p) limiters.push_back(std::make_unique<SharedLimiter>("cluster", c, *kv, kernel));
  }
  void take(Time at, std::uint32_t pod) {
    kernel.at(at, [this, pod] {
      const Time asked = kernel.now();
      limiters[pod]->take(1, ++member, [this, asked](const SharedDecision& d) { seen.push_back({asked, kernel.now(), d}); });
    });
  }
  std::size_t admitted(LimitVia via) const {
    std::size_t n = 0;
    for (const Seen& s : seen) n += s.d.admitted && s.d.via == via ? 1 : 0;
    return n;
  }
  const Time t0 = Time{} + seconds(10);
  Kernel kernel;
  std::unique_ptr<SimKv> kv;
  std::vector<std::unique_ptr<SharedLimiter>> limiters;
  std::vector<Seen> seen;
  std::uint64_t member = 0;
};

TEST_F(SharedLimiterTest, WhileTheStoreAnswersItDecidesForAllPodsTogether) {
  make(StoreDownPolicy::local, {});
  for (int i = 0; i < 12; ++i) take(t0, static_cast<std::uint32_t>(i % 3));
  kernel.run_until(t0 + milliseconds(500));
  ASSERT_EQ(seen.size(), 12U);
  EXPECT_EQ(admitted(LimitVia::store), 6U);
  for (const Seen& s : seen) EXPECT_EQ(s.d.via, LimitVia::store);
}

TEST_F(SharedLimiterTest, DenyAdmitsNothingWhileTheStoreIsDown) {
  make(StoreDownPolicy::deny, {Outage{Window{t0, seconds(60)}, OutageMode::error}});
  for (int i = 0; i < 9; ++i) take(t0 + milliseconds(i), static_cast<std::uint32_t>(i % 3));
  kernel.run_until(t0 + seconds(1));
  ASSERT_EQ(seen.size(), 9U);
  for (const Seen& s : seen) {
    EXPECT_FALSE(s.d.admitted);
    EXPECT_EQ(s.d.via, LimitVia::deny);
    EXPECT_EQ(s.d.store, KvStatus::unavailable);
  }
}

TEST_F(SharedLimiterTest, AllowAdmitsEverythingAndSaysSo) {
  make(StoreDownPolicy::allow, {Outage{Window{t0, seconds(60)}, OutageMode::error}});
  for (int i = 0; i < 9; ++i) take(t0 + milliseconds(i), static_cast<std::uint32_t>(i % 3));
  kernel.run_until(t0 + seconds(1));
  EXPECT_EQ(admitted(LimitVia::allow), 9U);
}

// Six a second shared by three pods: each pod's local share is two.
TEST_F(SharedLimiterTest, LocalAdmitsEachPodsShareWhileTheStoreIsDown) {
  make(StoreDownPolicy::local, {Outage{Window{t0, seconds(60)}, OutageMode::error}});
  for (int i = 0; i < 30; ++i) take(t0 + milliseconds(i), static_cast<std::uint32_t>(i % 3));
  kernel.run_until(t0 + seconds(1) - milliseconds(100));
  ASSERT_EQ(seen.size(), 30U);
  EXPECT_EQ(admitted(LimitVia::local), 6U);
  EXPECT_EQ(admitted(LimitVia::store), 0U);
}

// An outage that swallows calls costs a timeout per call only until the breaker on the store
// opens; then decisions come at once, and the breaker's probes find the store back.
TEST_F(SharedLimiterTest, TheBreakerOnTheStoreStopsPayingATimeoutPerCall) {
  make(StoreDownPolicy::local, {Outage{Window{t0, seconds(20)}, OutageMode::timeout}}, 1);
  for (int i = 0; i < 3000; ++i) take(t0 + milliseconds(10 * i), 0);  // 30 s of calls, 100 a second
  kernel.run_until(t0 + seconds(40));
  ASSERT_EQ(seen.size(), 3000U);
  std::size_t waited = 0;
  for (const Seen& s : seen) waited += s.answered - s.asked >= milliseconds(50) ? 1 : 0;
  // The breaker opens at the 5th failure (min_calls), when the calls of one more timeout (50 ms at
  // 100 a second: 5) are already waiting; then each 5 s open period ends with one probe (4 in 20 s).
  EXPECT_LE(waited, 5U + 5U + 4U);
  EXPECT_GE(waited, 5U);
  EXPECT_EQ(seen.back().d.via, LimitVia::store);  // back on the store after the outage
  EXPECT_EQ(limiters[0]->breaker_state(), BreakerState::closed);
}

// A backlog of held calls must not come back all at once: after the store refuses, this pod
// answers calls held without asking it until the refusal's retry_after, and gives each held call
// its own turn at the pod's share of the rate (window × pods / limit = 500 ms here).
TEST_F(SharedLimiterTest, HeldCallsAreNotAskedAgainEarlyAndGetTheirOwnTurns) {
  make(StoreDownPolicy::local, {});
  struct Count final : SinkFor<KvApplied> {
    std::size_t calls = 0;
    void on(const KvApplied&) override { ++calls; }
  } count;
  kv->bus().attach(count);
  for (int i = 0; i < 6; ++i) take(t0, 0);  // fills the log
  kernel.run_until(t0 + milliseconds(100));
  take(t0 + milliseconds(100), 0);          // refused by the store: the log is full for 900 ms more
  kernel.run_until(t0 + milliseconds(200));
  ASSERT_EQ(count.calls, 7U);
  for (int i = 0; i < 4; ++i) take(t0 + milliseconds(300), 0);
  kernel.run_until(t0 + milliseconds(400));
  EXPECT_EQ(count.calls, 7U) << "held calls before the refusal's retry_after do not reach the store";
  ASSERT_EQ(seen.size(), 11U);
  EXPECT_FALSE(seen[6].d.remembered);
  const Time first_turn = seen[6].answered + seen[6].d.retry_after;
  EXPECT_GE(first_turn, t0 + seconds(1));
  for (int i = 0; i < 4; ++i) {
    const Seen& s = seen[7 + static_cast<std::size_t>(i)];
    EXPECT_FALSE(s.d.admitted);
    EXPECT_TRUE(s.d.remembered);
    EXPECT_EQ(s.answered + s.d.retry_after, first_turn + milliseconds(500) * (i + 1));
  }
}

}  // namespace
}  // namespace relaysim::sim
