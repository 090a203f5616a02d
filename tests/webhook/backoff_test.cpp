#include <gtest/gtest.h>

#include "model/resilience/backoff.h"
#include "model/webhook/retry.h"

namespace relaysim {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

TEST(Backoff, ExponentialDoublesUpToTheCap) {
  BackoffPolicy p{BackoffKind::exponential, seconds(1), 2.0, minutes(15), Jitter::none};
  EXPECT_EQ(base_delay(p, 1), seconds(1));
  EXPECT_EQ(base_delay(p, 2), seconds(2));
  EXPECT_EQ(base_delay(p, 3), seconds(4));
  EXPECT_EQ(base_delay(p, 10), seconds(512));
  EXPECT_EQ(base_delay(p, 11), minutes(15));
  EXPECT_EQ(base_delay(p, 1000), minutes(15));  // no overflow far past the cap
}

TEST(Backoff, FixedIsTheInitialEveryTime) {
  BackoffPolicy p{BackoffKind::fixed, seconds(30), 2.0, minutes(15), Jitter::none};
  EXPECT_EQ(base_delay(p, 1), seconds(30));
  EXPECT_EQ(base_delay(p, 50), seconds(30));
}

TEST(Backoff, JitterStaysWithinItsBounds) {
  for (Jitter j : {Jitter::none, Jitter::full, Jitter::equal, Jitter::decorrelated}) {
    BackoffPolicy p{BackoffKind::exponential, seconds(1), 2.0, minutes(15), j};
    Rng rng(9);
    Duration prev{};
    for (std::uint32_t n = 1; n < 40; ++n) {
      const Duration d = next_delay(p, n, prev, rng);
      ASSERT_GE(d, min_delay(p, n)) << to_string(j) << " n=" << n;
      ASSERT_LE(d, p.max_interval) << to_string(j) << " n=" << n;
      if (j != Jitter::decorrelated) {
        ASSERT_LE(d, base_delay(p, n));
      }
      prev = d;
    }
  }
}

TEST(Backoff, FullJitterActuallyVaries) {
  BackoffPolicy p{BackoffKind::exponential, seconds(1), 2.0, minutes(15), Jitter::full};
  Rng rng(5);
  const Duration a = next_delay(p, 8, {}, rng);
  const Duration b = next_delay(p, 8, {}, rng);
  EXPECT_NE(a, b);
}

namespace wh = relaysim::webhook;

TEST(RetryPlan, RetryAfterIsAFloorCappedByRetryAfterMax) {
  wh::RetryPolicy p;
  p.backoff = {BackoffKind::exponential, seconds(1), 2.0, minutes(15), Jitter::none};
  p.retry_after_max = minutes(10);
  Rng rng(1);
  const Time now = Time{} + minutes(1);
  const auto plan = wh::plan_retry(p, 1, {}, minutes(2), now, now + std::chrono::hours(24), rng);
  EXPECT_EQ(plan.due_at, now + minutes(2));
  EXPECT_EQ(plan.not_before, now + minutes(2));
  const auto capped = wh::plan_retry(p, 1, {}, std::chrono::hours(3), now, now + std::chrono::hours(24), rng);
  EXPECT_EQ(capped.due_at, now + minutes(10));
}

TEST(RetryPlan, TheDeadlineClampComesLast) {
  wh::RetryPolicy p;
  p.backoff = {BackoffKind::exponential, minutes(10), 2.0, minutes(15), Jitter::none};
  Rng rng(1);
  const Time now = Time{} + std::chrono::hours(1);
  const Time deadline = now + minutes(3);
  const auto plan = wh::plan_retry(p, 1, {}, minutes(5), now, deadline, rng);
  EXPECT_EQ(plan.due_at, deadline);
  // Retry-After forbids an attempt before now + 5m, past the deadline: dead-letter at the deadline.
  EXPECT_TRUE(wh::must_dead_letter(deadline, deadline, plan.not_before));
  // Without Retry-After, the clamped attempt at the deadline itself is allowed.
  const auto plain = wh::plan_retry(p, 1, {}, Duration{-1}, now, deadline, rng);
  EXPECT_FALSE(wh::must_dead_letter(deadline, deadline, plain.not_before));
  EXPECT_TRUE(wh::must_dead_letter(deadline + Duration{1}, deadline, plain.not_before));
}

}  // namespace
}  // namespace relaysim
