// The outbox relay's invariants (O-*): what its oracle checks on every run.
#pragma once

#include <cstdint>

#include "model/core/names.h"
#include "sim/oracle/ledger.h"

namespace relaysim::sim::outbox {

enum class Invariant : std::uint8_t { final, once, fence, retry, order, rollback, relock, log, lifecycle };

// One row per invariant, in Invariant's order (model/core/names.h checks it).
inline constexpr auto kInvariants = enum_rows<Invariant, InvariantInfo>({
    {Invariant::final, {"O-final", "every committed message ends handled or failed once the faults are over, and a final message never changes"}},
    {Invariant::once, {"O-once", "each message's effect applied at most once (the inbox), and a handled message's exactly once"}},
    {Invariant::fence, {"O-fence", "per shard, the leader writes that take effect carry non-decreasing fencing tokens: once a leader has written, no older one does; and a leader counts its lease from when it asked, so never past what the coordinator granted"}},
    {Invariant::retry, {"O-retry", "no message published before its next_attempt_date or rescued before its processing timeout; each retry waits within its backoff's bounds for that attempt; no more attempts than its type's max_attempts, and exhausted only then"}},
    {Invariant::order, {"O-order", "with per-key ordering, a message's effect applied only when every earlier message of its entity is final"}},
    {Invariant::rollback, {"O-rollback", "the log never carries a record of a message that was not committed when the record was written"}},
    {Invariant::relock, {"O-relock", "every handling starts for a message processing under the record's attempt"}},
    {Invariant::log, {"O-log", "every record the log acknowledged was written, and every duplicate record explained; a message marked published only after the log acknowledged its record; the group never commits past a record no consumer finished"}},
    {Invariant::lifecycle, {"O-lifecycle", "every change of a message's status is a move of its lifecycle (kMessageLifecycle, docs/lifecycles.md)"}},
});
inline constexpr std::size_t kInvariantCount = std::size(kInvariants);

constexpr std::size_t index(Invariant i) { return static_cast<std::size_t>(i); }

}  // namespace relaysim::sim::outbox
