#include "model/resilience/rate_limiter.h"

#include <algorithm>
#include <cmath>

#include "model/core/assert.h"

namespace relaysim {

RateLimiter::RateLimiter(const RateLimit& limit)
    : rate_milli_(std::llround(limit.rate_per_s * 1000.0)),
      capacity_(static_cast<std::int64_t>(limit.burst) * kUnit),
      fill_ns_(0),
      tokens_(capacity_) {
  RELAYSIM_ASSERT(rate_milli_ >= 1 && rate_milli_ <= 1'000'000'000, "rate_per_s must be in [0.001, 1e6]");
  RELAYSIM_ASSERT(limit.burst >= 1 && limit.burst <= 1'000'000, "burst must be in [1, 1e6]");
  fill_ns_ = (capacity_ * 1000 + rate_milli_ - 1) / rate_milli_;
}

void RateLimiter::refill(Time now) {
  const std::int64_t elapsed = to_ns(now - last_);
  RELAYSIM_ASSERT(elapsed >= 0, "time went back");
  last_ = now;
  if (elapsed >= fill_ns_) {
    tokens_ = capacity_;
    carry_ = 0;
    return;
  }
  const std::int64_t milli = elapsed * rate_milli_ + carry_;
  tokens_ += milli / 1000;
  carry_ = milli % 1000;
  if (tokens_ >= capacity_) {
    tokens_ = capacity_;
    carry_ = 0;
  }
}

bool RateLimiter::try_acquire(Time now, std::uint32_t n) {
  refill(now);
  const std::int64_t need = static_cast<std::int64_t>(n) * kUnit;
  if (tokens_ < need) return false;
  tokens_ -= need;
  return true;
}

Time RateLimiter::available_at(Time now, std::uint32_t n) {
  refill(now);
  const std::int64_t need = static_cast<std::int64_t>(n) * kUnit;
  RELAYSIM_ASSERT(need <= capacity_, "asking for more tokens than the burst can ever hold");
  if (tokens_ >= need) return now;
  return now + Duration{((need - tokens_) * 1000 - carry_ + rate_milli_ - 1) / rate_milli_};
}

}  // namespace relaysim
