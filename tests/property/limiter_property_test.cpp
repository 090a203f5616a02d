// The token bucket's promises (model/resilience/rate_limiter.h) under random limits and random
// request streams: the window bound between every pair of grants, and available_at exactly.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <vector>

#include "model/resilience/rate_limiter.h"

namespace relaysim {
namespace {

struct Ask {
  std::int64_t gap_us;  // since the previous ask
  std::uint32_t n;
};

RC_GTEST_PROP(RateLimiterModel, NeverGrantsMoreThanBurstPlusRateTimesTheWindow, ()) {
  RateLimit limit;
  limit.rate_per_s = *rc::gen::inRange(1, 5000) / 10.0;  // 0.1 .. 500 per second
  limit.burst = *rc::gen::inRange<std::uint32_t>(1, 20);
  const auto asks = *rc::gen::container<std::vector<Ask>>(rc::gen::construct<Ask>(
      rc::gen::inRange<std::int64_t>(0, 200'000), rc::gen::inRange<std::uint32_t>(1, 4)));
  RateLimiter limiter(limit);
  Time now = Time{} + std::chrono::seconds(1);
  std::vector<std::pair<Time, std::uint32_t>> granted;
  for (const Ask& a : asks) {
    now += std::chrono::microseconds(a.gap_us);
    if (a.n > limit.burst) continue;
    const Time at = limiter.available_at(now, a.n);
    RC_ASSERT(at >= now);
    if (at > now) {
      RC_ASSERT(!limiter.try_acquire(now, a.n));
      if (at - Duration{1} > now) RC_ASSERT(!limiter.try_acquire(at - Duration{1}, a.n));  // not a nanosecond early
      now = at;
    }
    RC_ASSERT(limiter.try_acquire(now, a.n));  // ...and then it is available
    granted.emplace_back(now, a.n);
  }
  // In every window [t_i, t_j]: sum of grants <= burst + rate * (t_j - t_i).
  for (std::size_t i = 0; i < granted.size(); ++i) {
    std::uint64_t sum = 0;
    for (std::size_t j = i; j < granted.size(); ++j) {
      sum += granted[j].second;
      const double window_s = to_seconds(granted[j].first - granted[i].first);
      RC_ASSERT(static_cast<double>(sum) <= limit.burst + limit.rate_per_s * window_s + 1e-9);
    }
  }
}

TEST(RateLimiter, AFullBucketGrantsTheBurstThenRefillsAtTheRate) {
  RateLimiter l(RateLimit{10.0, 5});
  const Time t = Time{} + std::chrono::seconds(3);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(l.try_acquire(t));
  EXPECT_FALSE(l.try_acquire(t));
  EXPECT_EQ(l.available_at(t), t + std::chrono::milliseconds(100));
  EXPECT_TRUE(l.try_acquire(t + std::chrono::milliseconds(100)));
  EXPECT_FALSE(l.try_acquire(t + std::chrono::milliseconds(100)));
}

}  // namespace
}  // namespace relaysim
