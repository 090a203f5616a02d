// ReferenceLimiter: the four rate-limiting algorithms of model/resilience/limiters.h written from
// their definitions over the whole history of admissions — slow (each decision reads the history)
// and plainly right. The limiter's tests and the SMS gateway's oracle compare the model's Limiter
// with it decision by decision; it shares no code with the model beyond the spec.
//
//  - sliding_log: admitted iff the costs admitted in (now - window, now] plus this cost are at
//    most the limit; a member admitted in that window is a repeat, admitted and not counted.
//  - sliding_counter: with cur and prev the costs admitted in the current and the previous aligned
//    window and r the time into the current one: prev * (window - r) + (cur + cost) * window <=
//    limit * window.
//  - token_bucket and gcra: a bucket of `burst` tokens, full at the start, refilled at
//    limit/window: after admissions A, it holds min over each admission time s of
//    burst + rate * (now - s) - A[s, now] (the bucket was at most full at s), or burst with no
//    admission; admitted iff that is at least the cost.
#pragma once

#include <cstdint>
#include <vector>

#include "model/core/assert.h"
#include "model/resilience/limiters.h"

namespace relaysim::sim {

class ReferenceLimiter {
 public:
  explicit ReferenceLimiter(const LimiterSpec& spec) : spec_(spec) {
    RELAYSIM_ASSERT(spec.window > Duration::zero(), "a limit's window is longer than zero");
  }

  // Whether a call at `now` (not before the latest one recorded) would be admitted, and whether
  // it would be a repeat of a member in the window (sliding log only).
  struct Verdict {
    bool admitted = false;
    bool repeat = false;
  };
  Verdict judge(Time now, std::uint32_t cost, std::uint64_t member) const;
  // Records an admission that counts (not a repeat).
  void record(Time now, std::uint32_t cost, std::uint64_t member);
  void reset() { history_.clear(); }

  const LimiterSpec& spec() const { return spec_; }

 private:
  struct Admission {
    Time at;
    std::uint32_t cost;
    std::uint64_t member;
  };
  LimiterSpec spec_;
  std::vector<Admission> history_;
};

// Checks a limiter's stated bound over a list of admissions in time order: for every pair i <= j,
// the costs admitted in [t_i, t_j] are at most spec.bound(t_j - t_i). Returns the index of the
// last admission of the first interval that breaks it, or -1.
struct TimedCost {
  Time at;
  std::uint32_t cost;
};
std::int64_t first_bound_violation(const LimiterSpec& spec, const std::vector<TimedCost>& admitted);

}  // namespace relaysim::sim
