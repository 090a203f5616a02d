// The rate limiters' promises (model/resilience/limiters.h) under random specs and random calls,
// against the reference written from the definitions (sim/oracle/limiter_reference.h).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "model/resilience/limiters.h"
#include "tests/property/limiter_properties.h"

namespace relaysim {
namespace {

RC_GTEST_PROP(Limiters, MatchTheReferenceDecisionByDecision, ()) { limiter_props::matches_the_reference(); }
RC_GTEST_PROP(Limiters, TheOraclesReplayDecidesAsTheReference, ()) { limiter_props::replay_decides_as_the_reference(); }
RC_GTEST_PROP(Limiters, KeepTheirStatedBound, ()) { limiter_props::keeps_its_stated_bound(); }
RC_GTEST_PROP(Limiters, GcraDecidesAsTheTokenBucket, ()) { limiter_props::gcra_decides_as_the_token_bucket(); }
RC_GTEST_PROP(Limiters, SharesAddUpToTheLimit, ()) { limiter_props::shares_add_up_to_the_limit(); }
RC_GTEST_PROP(Limiters, PodsSharingALimitKeepItsBound, ()) { limiter_props::pods_sharing_a_limit_keep_its_bound(); }

const Time t0 = Time{} + std::chrono::seconds(3);

TEST(Limiters, AFullBucketGrantsTheBurstThenRefillsAtTheRate) {
  Limiter l(LimiterSpec{LimiterAlgorithm::token_bucket, 10, std::chrono::seconds(1), 5});
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(l.take(t0).admitted);
  const LimitDecision no = l.take(t0);
  EXPECT_FALSE(no.admitted);
  EXPECT_EQ(no.retry_after, std::chrono::milliseconds(100));
  EXPECT_TRUE(l.take(t0 + std::chrono::milliseconds(100)).admitted);
  EXPECT_FALSE(l.take(t0 + std::chrono::milliseconds(100)).admitted);
}

// Our GCRA burst is how many pass at once from rest (redis_rate); redis-cell would pass burst + 1.
TEST(Limiters, GcraAdmitsExactlyTheBurstAtOnce) {
  Limiter l(LimiterSpec{LimiterAlgorithm::gcra, 10, std::chrono::seconds(1), 3});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(l.take(t0).admitted);
  EXPECT_FALSE(l.take(t0).admitted);
}

// rolling-rate-limiter #36: a blocked call must not be recorded, or a client retrying faster
// than the limit stays blocked for ever.
TEST(Limiters, ABlockedCallIsNotRecordedInTheLog) {
  Limiter l(LimiterSpec{LimiterAlgorithm::sliding_log, 2, std::chrono::seconds(1), 0});
  EXPECT_TRUE(l.take(t0, 1, 1).admitted);
  EXPECT_TRUE(l.take(t0 + std::chrono::milliseconds(500), 1, 2).admitted);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(l.take(t0 + std::chrono::milliseconds(600 + i), 1, 100 + i).admitted);
  EXPECT_TRUE(l.take(t0 + std::chrono::seconds(1), 1, 3).admitted);  // the first has left the window
}

// rolling-rate-limiter #11: a repeated member must not be counted twice (nor refused: it is the
// same call, retried after its first try took effect).
TEST(Limiters, ARepeatedMemberIsAdmittedAndCountedOnce) {
  Limiter l(LimiterSpec{LimiterAlgorithm::sliding_log, 2, std::chrono::seconds(1), 0});
  EXPECT_TRUE(l.take(t0, 1, 7).admitted);
  EXPECT_TRUE(l.take(t0, 1, 7).admitted);
  EXPECT_TRUE(l.take(t0, 1, 8).admitted);
  EXPECT_FALSE(l.take(t0, 1, 9).admitted);
}

// SMS4J refreshed a counter's expiry on every send; a steady sender under the limit must pass.
TEST(Limiters, ASteadySenderUnderTheLimitAlwaysPasses) {
  for (const auto a : {LimiterAlgorithm::sliding_log, LimiterAlgorithm::sliding_counter,
                       LimiterAlgorithm::token_bucket, LimiterAlgorithm::gcra}) {
    Limiter l(LimiterSpec{a, 10, std::chrono::seconds(60), 0});
    for (int i = 0; i < 100; ++i) {
      EXPECT_TRUE(l.take(t0 + std::chrono::seconds(10 * i), 1, static_cast<std::uint64_t>(i + 1)).admitted)
          << to_string(a) << " send " << i;
    }
  }
}

TEST(Limiters, ACostAboveTheMaximumIsNeverAdmitted) {
  Limiter l(LimiterSpec{LimiterAlgorithm::gcra, 10, std::chrono::seconds(1), 4});
  EXPECT_EQ(l.take(t0, 5).retry_after, Duration::max());
  EXPECT_TRUE(l.take(t0, 4).admitted);
}

TEST(Limiters, ResetForgetsEverything) {
  Limiter l(LimiterSpec{LimiterAlgorithm::sliding_counter, 1, std::chrono::seconds(1), 0});
  EXPECT_TRUE(l.take(t0).admitted);
  EXPECT_FALSE(l.take(t0).admitted);
  l.reset();
  EXPECT_TRUE(l.take(t0).admitted);
}

TEST(Limiters, SpecsOutOfRangeAreNamed) {
  std::vector<ConfigError> out;
  validate(LimiterSpec{LimiterAlgorithm::gcra, 0, std::chrono::seconds(1), 0}, "limit", out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "limit.limit");
  EXPECT_EQ(out[0].message, "must be between 1 and 1000000");
  out.clear();
  validate(LimiterSpec{LimiterAlgorithm::gcra, 1, std::chrono::days(2), 0}, "limit", out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "limit.window");
  EXPECT_EQ(out[0].message, "must be between 1ms and 1d");
  EXPECT_FALSE(valid(LimiterSpec{LimiterAlgorithm::gcra, 1, std::chrono::days(2), 0}));
  EXPECT_TRUE(valid(LimiterSpec{}));
}

}  // namespace
}  // namespace relaysim
