// The webhook platform's planted bugs (see model/core/mutants.h): each names a bug one line of
// model code can be switched into, and the webhook property suite must catch every one listed in
// kMutants — its own and those of the shared components it uses.
#pragma once

#include "model/core/mutants.h"
#include "model/resilience/mutants.h"

namespace relaysim::mutant {

inline constexpr Mutant retry_ignores_deadline{"retry_ignores_deadline", "a retry is scheduled past deadline_at (no clamp)"};
inline constexpr Mutant expired_backlog_attempted{"expired_backlog_attempted",
                                                  "a claim past its deadline is attempted instead of dead-lettered"};
inline constexpr Mutant ingest_skips_idempotency{"ingest_skips_idempotency", "a duplicate create stores a second request"};
inline constexpr Mutant cache_ignores_ttl{"cache_ignores_ttl", "the URL cache serves entries of any age"};
inline constexpr Mutant completion_ignores_token{"completion_ignores_token", "a completion applies under a stale claim token"};
inline constexpr Mutant retry_terminal_4xx{"retry_terminal_4xx", "a terminal 4xx is retried"};
inline constexpr Mutant ignore_retry_after{"ignore_retry_after", "Retry-After is not honoured"};
inline constexpr Mutant ignore_backoff{"ignore_backoff", "a retry is due at once, ignoring the backoff"};
inline constexpr Mutant lease_shorter_than_timeout{"lease_shorter_than_timeout",
                                                   "claims are leased for less than lookup + HTTP timeout"};
inline constexpr Mutant crash_loses_leased_work{"crash_loses_leased_work", "a request whose claimant died is never rescued"};
inline constexpr Mutant attempt_reuses_url{"attempt_reuses_url",
                                           "an attempt is sent to the URL its dispatcher slot used before (reported right)"};
inline constexpr Mutant webhook_id_per_attempt{"webhook_id_per_attempt", "the webhook-id names the attempt, not the request"};
inline constexpr Mutant claim_keeps_old_payload{"claim_keeps_old_payload",
                                                "a claim (memory store) keeps the payload of the request its row held before"};
inline constexpr Mutant backoff_step_off_by_one{"backoff_step_off_by_one", "a retry's backoff takes the next attempt's step"};
inline constexpr Mutant retry_after_uncapped{"retry_after_uncapped", "Retry-After is honoured beyond retry_after_max"};
inline constexpr Mutant dead_letter_not_notified{"dead_letter_not_notified", "the tenant is not told of a dead-lettered request"};
inline constexpr Mutant cache_ages_from_answer{"cache_ages_from_answer",
                                               "a URL cache entry ages from ServiceB's answer, not from the lookup"};
inline constexpr Mutant deferral_ignores_deadline{"deferral_ignores_deadline", "a deferral is planned past deadline_at"};
inline constexpr Mutant replay_keeps_deadline{"replay_keeps_deadline",
                                              "a replayed request keeps its old, passed deadline (memory store)"};
inline constexpr Mutant replay_of_open_request{"replay_of_open_request",
                                               "a replay restarts a request that is not terminal (memory store)"};
inline constexpr Mutant key_ignores_cxid{"key_ignores_cxid",
                                         "the idempotency key is the request_id alone, not (cxid, request_id) (memory store)"};
inline constexpr Mutant send_after_lease{"send_after_lease",
                                         "a pod paused past its claim's lease still sends the attempt when it wakes"};
inline constexpr Mutant blocked_claimed_while_refused{
    "blocked_claimed_while_refused", "a pod claims blocked requests while its breaker refuses every lookup"};
inline constexpr Mutant notice_never_removed{"notice_never_removed",
                                             "a sent notice stays in the outbox, to be sent again after every lease"};

}  // namespace relaysim::mutant

namespace relaysim::webhook {

// In the order reports list them.
inline constexpr const Mutant* kMutants[] = {
    &mutant::retry_ignores_deadline,   &mutant::expired_backlog_attempted, &mutant::ingest_skips_idempotency,
    &mutant::breaker_never_opens,      &mutant::half_open_unlimited,       &mutant::cache_ignores_ttl,
    &mutant::completion_ignores_token, &mutant::retry_terminal_4xx,        &mutant::ignore_retry_after,
    &mutant::ignore_backoff,           &mutant::lease_shorter_than_timeout, &mutant::crash_loses_leased_work,
    &mutant::attempt_reuses_url,       &mutant::webhook_id_per_attempt,     &mutant::claim_keeps_old_payload,
    &mutant::backoff_step_off_by_one,  &mutant::retry_after_uncapped,       &mutant::dead_letter_not_notified,
    &mutant::cache_ages_from_answer,   &mutant::deferral_ignores_deadline,  &mutant::breaker_closes_early,
    &mutant::breaker_ignores_min_calls, &mutant::breaker_counts_stale_results, &mutant::replay_keeps_deadline,
    &mutant::replay_of_open_request,   &mutant::key_ignores_cxid,          &mutant::send_after_lease,
    &mutant::blocked_claimed_while_refused, &mutant::notice_never_removed,
};

}  // namespace relaysim::webhook
