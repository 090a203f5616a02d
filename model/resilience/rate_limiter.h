// RateLimiter: a token bucket in virtual time, for client-side rate limits (an SMS provider's
// requests per second, a tenant's quota of sends).
//
// Promises:
//  - In any interval of length t, at most `burst + rate * t` permits are granted (rounded down).
//  - Tokens refill continuously at `rate` per second up to `burst`; a full bucket grants `burst`
//    at once.
//  - Arithmetic is integer (tokens are counted in 1e-9 units), so the same calls give the same
//    answers on every machine.
#pragma once

#include <cstdint>

#include "model/core/time.h"

namespace relaysim {

struct RateLimit {
  double rate_per_s = 100.0;  // in [0.001, 1e6]; kept to a thousandth
  std::uint32_t burst = 100;  // in [1, 1e6]
};

class RateLimiter {
 public:
  explicit RateLimiter(const RateLimit& limit);

  // Takes `n` tokens if there are that many at `now`; `now` must not go back.
  bool try_acquire(Time now, std::uint32_t n = 1);
  // The earliest time try_acquire(n) can succeed (now, if it can already).
  Time available_at(Time now, std::uint32_t n = 1);

 private:
  static constexpr std::int64_t kUnit = 1'000'000'000;  // one token, in fixed point
  void refill(Time now);

  // Tokens refill at rate_milli_ / 1000 units per nanosecond. The bounds on rate and burst keep
  // every product below 2^63.
  std::int64_t rate_milli_;
  std::int64_t capacity_;  // burst, fixed point
  std::int64_t fill_ns_;   // how long an empty bucket takes to fill
  std::int64_t tokens_;    // fixed point
  std::int64_t carry_ = 0; // thousandths of a unit not yet added, so frequent calls lose nothing
  Time last_{};
};

}  // namespace relaysim
