// The simulated Redis (sim/world/kv.h): when calls apply and answer, what outages, restarts and
// lost answers do, and why limits must be taken atomically.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "sim/kernel/kernel.h"
#include "sim/world/kv.h"

namespace relaysim::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct Applied {
  std::string key;
  LimitOp op;
  Time at;
  bool admitted;
  bool answered;
};

class Truth final : public SinkFor<KvApplied>, public SinkFor<KvRestarted> {
 public:
  void on(const KvApplied& e) override {
    applied.push_back({std::string(e.key), e.op, e.at, e.decision.admitted, e.answered});
  }
  void on(const KvRestarted& e) override { restarts.push_back(e.at); }
  std::vector<Applied> applied;
  std::vector<Time> restarts;
};

// Latencies are drawn (log-normal through p50 and p99), so a constant one is exact to a few ns.
::testing::AssertionResult near(Time a, Time b) {
  if (std::abs(to_ns(a - b)) <= 100) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << to_ns(a - b) << " ns apart";
}

struct Answer {
  Time at;
  KvStatus status;
  bool admitted;
};

class KvTest : public ::testing::Test {
 protected:
  void make(KvSpec spec) {
    spec.latency = LatencySpec{milliseconds(4), milliseconds(4)};  // 2 ms each way
    kv = std::make_unique<SimKv>(spec, kernel, 1);
    kv->bus().attach(truth);
    kv->install();
  }
  // A call from a client at `at`; its answer is appended to `answers`.
  void call(Time at, LimitOp op, std::uint64_t member = 0, Duration timeout = milliseconds(50)) {
    kernel.at(at, [this, op, member, timeout] {
      kv->limit("k", one_per_second, op, 1, member, timeout, [this](const KvLimitAnswer& a) {
        answers.push_back({kernel.now(), a.status, a.decision.admitted});
      });
    });
  }
  const LimiterSpec one_per_second{LimiterAlgorithm::sliding_log, 1, seconds(1), 0};
  const Time t0 = Time{} + seconds(10);
  Kernel kernel;
  Truth truth;
  std::unique_ptr<SimKv> kv;
  std::vector<Answer> answers;
};

TEST_F(KvTest, ACallAppliesAtTheStoreHalfwayAndAnswersAfterTheRoundTrip) {
  make({});
  call(t0, LimitOp::take, 1);
  call(t0, LimitOp::take, 2);
  kernel.run_until(t0 + seconds(1));
  ASSERT_EQ(truth.applied.size(), 2U);
  EXPECT_TRUE(near(truth.applied[0].at, t0 + milliseconds(2)));
  EXPECT_TRUE(truth.applied[0].admitted);
  EXPECT_FALSE(truth.applied[1].admitted);
  ASSERT_EQ(answers.size(), 2U);
  EXPECT_TRUE(near(answers[0].at, t0 + milliseconds(4)));
  EXPECT_EQ(answers[0].status, KvStatus::ok);
  EXPECT_TRUE(answers[0].admitted);
  EXPECT_FALSE(answers[1].admitted);
}

TEST_F(KvTest, AnErrorOutageRefusesAfterTheRoundTripAndAppliesNothing) {
  make(KvSpec{{}, {Outage{Window{t0, seconds(5)}, OutageMode::error}}, {}, 0.0});
  call(t0, LimitOp::take);
  kernel.run_until(t0 + seconds(1));
  EXPECT_TRUE(truth.applied.empty());
  ASSERT_EQ(answers.size(), 1U);
  EXPECT_EQ(answers[0].status, KvStatus::unavailable);
  EXPECT_TRUE(near(answers[0].at, t0 + milliseconds(4)));
}

TEST_F(KvTest, ATimeoutOutageCostsTheCallerItsWholeTimeout) {
  make(KvSpec{{}, {Outage{Window{t0, seconds(5)}, OutageMode::timeout}}, {}, 0.0});
  call(t0, LimitOp::take, 0, milliseconds(50));
  kernel.run_until(t0 + seconds(1));
  EXPECT_TRUE(truth.applied.empty());
  ASSERT_EQ(answers.size(), 1U);
  EXPECT_EQ(answers[0].status, KvStatus::timeout);
  EXPECT_EQ(answers[0].at, t0 + milliseconds(50));
}

TEST_F(KvTest, ARestartRefusesForItsWindowThenComesBackEmpty) {
  make(KvSpec{{}, {}, {Window{t0 + milliseconds(100), milliseconds(100)}}, 0.0});
  call(t0, LimitOp::take, 1);                         // admitted; the window holds it for 1 s
  call(t0 + milliseconds(150), LimitOp::take, 2);     // refused: restarting
  call(t0 + milliseconds(300), LimitOp::take, 3);     // admitted: the store forgot the first
  kernel.run_until(t0 + seconds(1));
  ASSERT_EQ(truth.restarts.size(), 1U);
  EXPECT_EQ(truth.restarts[0], t0 + milliseconds(100));
  ASSERT_EQ(answers.size(), 3U);
  EXPECT_TRUE(answers[0].admitted);
  EXPECT_EQ(answers[1].status, KvStatus::unavailable);
  EXPECT_EQ(answers[2].status, KvStatus::ok);
  EXPECT_TRUE(answers[2].admitted);
}

// The call took effect, the answer was lost: the caller times out, and its retry with the same
// member is admitted without being counted twice.
TEST_F(KvTest, ALostAnswerTookEffectAndTheRetryOfTheSameMemberIsNotCountedTwice) {
  make(KvSpec{{}, {}, {}, 1.0});
  call(t0, LimitOp::take, 7);
  kernel.run_until(t0 + seconds(1) - milliseconds(500));
  ASSERT_EQ(truth.applied.size(), 1U);
  EXPECT_TRUE(truth.applied[0].admitted);
  EXPECT_FALSE(truth.applied[0].answered);
  ASSERT_EQ(answers.size(), 1U);
  EXPECT_EQ(answers[0].status, KvStatus::timeout);
  call(kernel.now(), LimitOp::take, 7);
  call(kernel.now(), LimitOp::take, 8);
  kernel.run_until(t0 + seconds(1) - milliseconds(100));
  ASSERT_EQ(truth.applied.size(), 3U);
  EXPECT_TRUE(truth.applied[1].admitted);   // the same member: admitted again
  EXPECT_FALSE(truth.applied[2].admitted);  // and it still counts once, so the window is full
}

TEST_F(KvTest, ACallerThatGivesUpBeforeTheCallArrivesStillHasItApplied) {
  make({});
  call(t0, LimitOp::take, 1, milliseconds(1));
  kernel.run_until(t0 + seconds(1));
  ASSERT_EQ(answers.size(), 1U);
  EXPECT_EQ(answers[0].status, KvStatus::timeout);
  EXPECT_EQ(answers[0].at, t0 + milliseconds(1));
  ASSERT_EQ(truth.applied.size(), 1U);
  EXPECT_TRUE(near(truth.applied[0].at, t0 + milliseconds(2)));
}

// Two pods that check, then set, in two calls both see room and both record: twice the limit.
// The atomic take admits one.
TEST_F(KvTest, CheckThenSetOverAdmitsWhereTheAtomicTakeDoesNot) {
  make({});
  int recorded = 0;
  for (int pod = 0; pod < 2; ++pod) {
    kernel.at(t0, [this, &recorded, pod] {
      kv->limit("k", one_per_second, LimitOp::peek, 1, 0, milliseconds(50), [this, &recorded, pod](const KvLimitAnswer& a) {
        if (a.status != KvStatus::ok || !a.decision.admitted) return;
        kv->limit("k", one_per_second, LimitOp::force, 1, static_cast<std::uint64_t>(pod + 1), milliseconds(50),
                  [&recorded](const KvLimitAnswer&) { ++recorded; });
      });
    });
  }
  kernel.run_until(t0 + milliseconds(100));
  EXPECT_EQ(recorded, 2);  // over the limit of one
  call(t0 + seconds(5), LimitOp::take, 10);
  call(t0 + seconds(5), LimitOp::take, 11);
  kernel.run_until(t0 + seconds(6));
  ASSERT_EQ(answers.size(), 2U);
  EXPECT_NE(answers[0].admitted, answers[1].admitted);
}

TEST_F(KvTest, AKeyMetWithAnotherSpecStartsAfresh) {
  make({});
  call(t0, LimitOp::take, 1);
  kernel.run_until(t0 + milliseconds(10));
  kernel.at(kernel.now(), [this] {
    kv->limit("k", LimiterSpec{LimiterAlgorithm::sliding_log, 2, seconds(1), 0}, LimitOp::take, 1, 2, milliseconds(50),
              [this](const KvLimitAnswer& a) { answers.push_back({kernel.now(), a.status, a.decision.admitted}); });
  });
  kernel.run_until(t0 + milliseconds(100));
  ASSERT_EQ(answers.size(), 2U);
  EXPECT_TRUE(answers[1].admitted);
  EXPECT_EQ(kv->keys(), 1U);
}

}  // namespace
}  // namespace relaysim::sim
