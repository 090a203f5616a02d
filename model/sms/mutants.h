// The SMS gateway's planted bugs (see model/core/mutants.h). Its property suite must catch every
// one, and those of the shared components it relies on (model/resilience/mutants.h).
#pragma once

#include "model/core/mutants.h"

namespace relaysim::sms::mutant {

inline constexpr Mutant token_scope_unchecked{"token_scope_unchecked",
                                              "a send is accepted for a sender or template its token does not grant"};
inline constexpr Mutant token_expiry_unchecked{"token_expiry_unchecked", "an expired token is accepted"};
inline constexpr Mutant token_expiry_off_by_one{"token_expiry_off_by_one",
                                                "a token is still accepted in the second its expiry claim names"};
inline constexpr Mutant dedup_on_biz_id_alone{"dedup_on_biz_id_alone",
                                              "dedup keys on biz_id alone, so another biz_type's message is taken for a repeat"};
inline constexpr Mutant quota_charged_per_attempt{"quota_charged_per_attempt",
                                                  "every retried submit charges the quota again"};
inline constexpr Mutant compensation_skips_status{"compensation_skips_status",
                                                  "messages left unknown never come due again, so nothing resends or ends them"};
inline constexpr Mutant failover_after_ambiguous_timeout{
    "failover_after_ambiguous_timeout", "a timed-out submit is sent to another provider, which may send it twice"};
inline constexpr Mutant async_never_exits{"async_never_exits",
                                          "async mode, once entered, is never left: neither its timer nor its probes end it"};
inline constexpr Mutant scheduled_sent_early{"scheduled_sent_early",
                                             "a scheduled message is due when it is accepted, not at its send_at"};
inline constexpr Mutant retry_counter_shared{
    "retry_counter_shared", "the retry decorator counts one pod's submits of all messages, not each message's own"};
inline constexpr Mutant opt_out_ignored{"opt_out_ignored",
                                        "a marketing message is sent to a recipient who opted out after the campaign chose them"};
inline constexpr Mutant one_attempt_too_many{"one_attempt_too_many",
                                             "a message is submitted once more than its business's max_attempts"};
inline constexpr Mutant quota_refuses_last_unit{"quota_refuses_last_unit",
                                                "a request that would use a quota's last unit is refused as exhausted"};
inline constexpr Mutant retry_waits_next_step{"retry_waits_next_step",
                                              "a failed submit's retry waits the backoff step of the attempt after it"};
inline constexpr Mutant in_memory_retry_early{"in_memory_retry_early",
                                              "a retry kept in a pod's memory is submitted at once, not when its backoff is over"};
inline constexpr Mutant quiet_hours_server_tz{"quiet_hours_server_tz",
                                              "quiet hours are judged in the gateway's time zone, not the recipient's"};
inline constexpr Mutant async_enters_one_late{
    "async_enters_one_late", "async mode is entered one slow submit after the consecutive-latency rule holds"};
inline constexpr Mutant retry_before_failover{
    "retry_before_failover", "a throttled or unavailable provider is retried after a backoff while another was never tried"};
inline constexpr Mutant quiet_hours_suppress{
    "quiet_hours_suppress", "a marketing message that meets quiet hours is suppressed, not deferred to their end"};
inline constexpr Mutant cap_refuses_last_place{
    "cap_refuses_last_place", "a marketing message that would take a frequency cap's last place is suppressed"};
inline constexpr Mutant cap_takes_one_more{
    "cap_takes_one_more", "a marketing message takes a place in a frequency cap whose places are all held"};
inline constexpr Mutant validity_from_acceptance{
    "validity_from_acceptance", "a message's validity is counted from its acceptance, not from its send_at"};

}  // namespace relaysim::sms::mutant
