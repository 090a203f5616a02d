#include "model/webhook/retry.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/webhook/mutants.h"

namespace relaysim::webhook {

RetryPlan plan_retry(const RetryPolicy& policy, std::uint32_t retry_number, Duration previous_delay,
                     Duration retry_after, Time now, Time deadline_at, Rng& rng) {
  RELAYSIM_ASSERT(policy.retry_after_max >= Duration::zero(), "the cap on Retry-After is not negative");
  RetryPlan plan;
  plan.delay = next_delay(policy.backoff, retry_number, previous_delay, rng);
  Duration wait = planted(mutant::ignore_backoff) ? Duration::zero() : plan.delay;
  plan.not_before = now;
  if (retry_after >= Duration::zero() && !planted(mutant::ignore_retry_after)) {
    const Duration honoured =
        planted(mutant::retry_after_uncapped) ? retry_after : std::min(retry_after, policy.retry_after_max);
    wait = std::max(wait, honoured);
    plan.not_before = now + honoured;
  }
  plan.due_at = std::min(now + wait, deadline_at);  // the deadline clamp comes last
  if (planted(mutant::retry_ignores_deadline)) plan.due_at = now + wait;
  plan.due_at = std::max(plan.due_at, now);
  RELAYSIM_ASSERT(plan.due_at <= std::max(deadline_at, now) || planted(mutant::retry_ignores_deadline),
                  "a retry planned past the deadline");
  return plan;
}

}  // namespace relaysim::webhook
