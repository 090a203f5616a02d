// The outbox relay's planted bugs (see model/core/mutants.h). Its property suite must catch every one.
#pragma once

#include "model/core/mutants.h"

namespace relaysim::outbox::mutant {

inline constexpr Mutant publish_before_commit{
    "publish_before_commit", "a business operation publishes its messages before its transaction commits, so a rolled-back one is published too"};
inline constexpr Mutant write_without_fence{
    "write_without_fence", "a leader's writes (scan, mark, rescue) are not checked against the shard's fence, so a paused old leader writes after its successor"};
inline constexpr Mutant no_inbox{"no_inbox", "the consumer's effect is applied without the inbox, so a redelivered message is applied again"};
inline constexpr Mutant inbox_outside_effect_tx{
    "inbox_outside_effect_tx", "the inbox row is written in its own transaction after the effect's, so a handler that dies between them applies the effect twice"};
inline constexpr Mutant rescuer_never_runs{"rescuer_never_runs",
                                           "processing messages whose record was lost or whose consumer died are never returned to pending"};
inline constexpr Mutant relock_skips_status{
    "relock_skips_status", "the consumer re-locks a message by id alone, without checking it is still processing under the record's attempt"};
inline constexpr Mutant next_attempt_ignored{"next_attempt_ignored",
                                             "the leader publishes a pending message before its next_attempt_date"};
inline constexpr Mutant attempts_never_exhausted{"attempts_never_exhausted",
                                                 "a message that keeps failing is retried past its type's max_attempts"};
inline constexpr Mutant producer_session_reused{
    "producer_session_reused", "a relay that takes over a shard reuses an earlier producer id and restarts its sequence numbers, so the log drops its records as duplicates while acknowledging them"};
inline constexpr Mutant offsets_committed_before_handling{
    "offsets_committed_before_handling", "a consumer commits a poll's offsets when it receives the records, so records it had not finished are skipped after a crash"};
inline constexpr Mutant rescue_early{"rescue_early",
                                     "the rescuer returns processing messages to pending before their processing timeout"};
inline constexpr Mutant retry_backoff_one_step_long{"retry_backoff_one_step_long",
                                                   "a failed handling's retry waits the next attempt's backoff step"};
inline constexpr Mutant timeout_taken_as_written{
    "timeout_taken_as_written", "a publish that timed out is taken as written: its messages are marked processing as if the log had them"};
inline constexpr Mutant lease_counted_from_answer{
    "lease_counted_from_answer", "a leader counts its lease from when the coordinator's answer came, not from when it asked, so it outlasts the grant"};
inline constexpr Mutant key_order_ignored{"key_order_ignored",
                                          "with per-key ordering, the leader publishes a key's later message while an earlier one is unfinished"};

}  // namespace relaysim::outbox::mutant
