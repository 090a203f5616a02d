// RedisKeyValue, the KeyValue port on a real Redis: its answers as the port promises them, through
// what a real Redis does — it answers, it dies (refused: certainly not run), it comes back empty
// and without its scripts (the script's text is sent instead), it stalls (timeout: may have run,
// and the late answer is dropped).
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <optional>

#include "live/redis_kv.h"
#include "tests/live/redis_server.h"

namespace relaysim::live {
namespace {

using testing_redis::RedisServer;

class RedisKv : public ::testing::Test {
 protected:
  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);  // as relaysim's main does
    std::string problem;
    ASSERT_TRUE(redis.start(problem)) << problem;
    kv.emplace(io, RedisAddress{redis.socket()});
  }
  void TearDown() override { kv.reset(); }

  // One call, run on the loop until it is answered.
  KvLimitAnswer call(LimitOp op, Duration timeout = std::chrono::seconds(5)) {
    // Shared with the callback: an answer that came twice, after this call returned, is still caught.
    const auto answer = std::make_shared<std::optional<KvLimitAnswer>>();
    kv->limit("limit:biz1", spec, op, 1, 0, timeout, [answer](const KvLimitAnswer& a) {
      EXPECT_FALSE(*answer) << "answered twice";
      *answer = a;
    });
    EXPECT_FALSE(*answer) << "answered inside the call";
    // A bound on how long a broken test may hang, not a timing check.
    for (int turns = 0; !*answer && turns < 200; ++turns) {
      if (io.stopped()) io.restart();  // it stops whenever it runs out of work
      io.run_one_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(*answer) << "no answer";
    return answer->value_or(KvLimitAnswer{});
  }

  boost::asio::io_context io;
  RedisServer redis;
  std::optional<RedisKeyValue> kv;
  // Two a day: a third call is refused however slowly the machine runs.
  LimiterSpec spec{LimiterAlgorithm::gcra, 2, std::chrono::hours(24), 0};
};

TEST_F(RedisKv, AnswersWithTheScriptsDecisions) {
  for (const bool expected : {true, true, false}) {
    const KvLimitAnswer a = call(LimitOp::take);
    EXPECT_EQ(a.status, KvStatus::ok);
    EXPECT_EQ(a.decision.admitted, expected);
    if (!expected) {
      EXPECT_GT(a.decision.retry_after, std::chrono::hours(11)) << "half a day until the next one";
      EXPECT_LE(a.decision.retry_after, std::chrono::hours(12));
    }
  }
  const KvLimitAnswer peeked = call(LimitOp::peek);
  EXPECT_EQ(peeked.status, KvStatus::ok);
  EXPECT_FALSE(peeked.decision.admitted);
  EXPECT_EQ(kv->calls_in_flight(), 0u);
}

TEST_F(RedisKv, ARedisThatIsGoneIsUnavailableAndOneThatCameBackEmptyAnswersAfresh) {
  EXPECT_TRUE(call(LimitOp::take).decision.admitted);
  EXPECT_TRUE(call(LimitOp::take).decision.admitted);
  EXPECT_FALSE(call(LimitOp::take).decision.admitted);
  redis.kill();
  // The first call goes out on the connection before its end is noticed: it may have run.
  EXPECT_EQ(call(LimitOp::take).status, KvStatus::timeout);
  EXPECT_EQ(call(LimitOp::take).status, KvStatus::unavailable) << "no server: nothing ran";
  std::string problem;
  ASSERT_TRUE(redis.start(problem)) << problem;
  // Empty, and without the script in its cache: EVALSHA is refused, the script's text goes instead.
  const KvLimitAnswer back = call(LimitOp::take);
  EXPECT_EQ(back.status, KvStatus::ok);
  EXPECT_TRUE(back.decision.admitted) << "its limits came back empty";
  EXPECT_EQ(kv->calls_in_flight(), 0u);
}

TEST_F(RedisKv, AStalledRedisTimesOutAndItsConnectionIsMadeAgain) {
  EXPECT_TRUE(call(LimitOp::take).decision.admitted);
  redis.pause();
  EXPECT_EQ(call(LimitOp::take, std::chrono::milliseconds(200)).status, KvStatus::timeout) << "may have run";
  EXPECT_EQ(kv->calls_in_flight(), 0u) << "the connection that stopped answering is dropped, its calls with it";
  redis.resume();
  // A new connection answers. The stalled call may have run when Redis woke (its command was in
  // the socket before the connection was dropped): two a day are spent by the next call at most.
  const KvLimitAnswer after = call(LimitOp::take);
  EXPECT_EQ(after.status, KvStatus::ok);
  EXPECT_FALSE(call(LimitOp::take).decision.admitted);
  EXPECT_EQ(kv->calls_in_flight(), 0u);
}

}  // namespace
}  // namespace relaysim::live
