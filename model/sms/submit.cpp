#include "model/sms/submit.h"

#include "model/core/assert.h"
#include "model/sms/mutants.h"

namespace relaysim::sms {

Decision decide(const SubmitContext& c, const RetryPolicy& retry, OnUnknown on_unknown, Rng& rng) {
  RELAYSIM_ASSERT(c.attempts >= 1, "a decision follows a submit");
  const bool attempts_left =
      planted(mutant::one_attempt_too_many) ? c.attempts <= retry.max_attempts : c.attempts < retry.max_attempts;
  const std::uint32_t step = planted(mutant::retry_waits_next_step) ? c.attempts + 1u : c.attempts;
  const Time later = c.now + next_delay(retry.backoff, step, c.last_delay, rng);
  switch (c.outcome) {
    case SubmitClass::accepted: return {Step::submitted, Reason::none, c.now + c.receipt_timeout};
    case SubmitClass::refused: return {Step::fail, Reason::refused, {}};
    case SubmitClass::throttled:
    case SubmitClass::unavailable:
      if (!attempts_left) return {Step::fail, Reason::exhausted, {}};
      if (c.untried_provider_left && !planted(mutant::retry_before_failover)) return {Step::fail_over, Reason::none, c.now};
      return {Step::retry, Reason::none, later};
    case SubmitClass::timeout:
    case SubmitClass::reset:
      if (planted(mutant::failover_after_ambiguous_timeout) && c.untried_provider_left && attempts_left) {
        return {Step::fail_over, Reason::none, c.now};
      }
      if (on_unknown == OnUnknown::fail) return {Step::fail, Reason::ambiguous, {}};
      if (!attempts_left) return {Step::fail, Reason::exhausted, {}};
      return {Step::unknown, Reason::none, later};
  }
  return {Step::fail, Reason::refused, {}};
}

SubmitClass classify_submit(NetError error, int status) {
  switch (error) {
    case NetError::none: break;
    case NetError::timeout: return SubmitClass::timeout;
    case NetError::connect_error:
    case NetError::dns_error:
    case NetError::forbidden_address:
    case NetError::bad_url:
    case NetError::too_late: return SubmitClass::unavailable;
  }
  if (status >= 200 && status <= 299) return SubmitClass::accepted;
  if (status == 429) return SubmitClass::throttled;
  if (status == 503) return SubmitClass::unavailable;
  if (status >= 400 && status <= 499) return SubmitClass::refused;
  return SubmitClass::reset;
}

}  // namespace relaysim::sms
