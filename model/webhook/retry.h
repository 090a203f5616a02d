// Retry planning: when a failed request is tried next, with the deadline honoured last.
//
// The order matters: backoff with jitter first, then Retry-After as a floor (capped
// at retry_after_max), and only then the clamp to deadline_at — so neither jitter nor Retry-After
// can push an attempt past the deadline. A plan whose honest next time lies past the deadline is
// due *at* the deadline; if Retry-After forbids an attempt even then, the claimant dead-letters it
// at the deadline instead of attempting (see must_dead_letter).
#pragma once

#include <cstdint>

#include "model/core/random.h"
#include "model/core/time.h"
#include "model/resilience/backoff.h"

namespace relaysim::webhook {

struct RetryPolicy {
  BackoffPolicy backoff{};
  Duration retry_after_max = std::chrono::hours(1);
  Duration deadline = std::chrono::hours(24);
  bool operator==(const RetryPolicy&) const = default;
};

struct RetryPlan {
  Time due_at{};
  Time not_before{};
  Duration delay{};  // the backoff delay drawn (before Retry-After and the clamp)
};

// `retry_number` is 1 for the first retry. `retry_after` < 0 means "no header".
RetryPlan plan_retry(const RetryPolicy& policy, std::uint32_t retry_number, Duration previous_delay,
                     Duration retry_after, Time now, Time deadline_at, Rng& rng);

// The deadline, spelt once: a moment is past it when it comes after deadline_at. An attempt may
// still start at deadline_at itself.
constexpr bool past_deadline(Time t, Time deadline_at) { return t > deadline_at; }

// True when a request claimed at `now` may not be attempted and must be dead-lettered: its
// deadline has passed, or Retry-After still forbids an attempt and no later time is allowed.
constexpr bool must_dead_letter(Time now, Time deadline_at, Time not_before) {
  return past_deadline(now, deadline_at) || (now < not_before && past_deadline(not_before, deadline_at));
}

}  // namespace relaysim::webhook
