// The webhook platform's invariants: what its oracle checks on every run.
#pragma once

#include <cstdint>

#include "model/core/names.h"
#include "sim/oracle/ledger.h"

namespace relaysim::sim::webhook {

enum class Invariant : std::uint8_t { idem, deadline, nodup, noloss, retry, breaker, url, lifecycle };

// One row per invariant, in Invariant's order (model/core/names.h checks it).
inline constexpr auto kInvariants = enum_rows<Invariant, InvariantInfo>({
    {Invariant::idem, {"W-idem", "one stored request per (cxid, request_id); duplicates answered with the original"}},
    {Invariant::deadline, {"W-deadline", "nothing attempted or rescheduled past deadline_at; terminal by the deadline plus a bound"}},
    {Invariant::nodup, {"W-nodup", "no attempt after a 2xx, in parallel, or past its claim's lease; every endpoint duplicate explained"}},
    {Invariant::noloss, {"W-noloss", "every acknowledged request reaches exactly one terminal state (once more per replay; only terminal ones replay); each failure told to its tenant at least once (twice only as a resend after its sender died), no notice left in the outbox past its bound"}},
    {Invariant::retry, {"W-retry", "each retry planned within the policy's bounds, none attempted early or after a terminal verdict"}},
    {Invariant::breaker, {"W-breaker", "no ServiceB call while open, bounded half-open probes, closed after recovery, blocked work left alone while open"}},
    {Invariant::url, {"W-url", "each send reaches a URL ServiceB held for its cxid within the cache TTL, with its own webhook-id and payload"}},
    {Invariant::lifecycle, {"W-lifecycle", "every change of a request's status is a move of its lifecycle (kRequestLifecycle, docs/lifecycles.md)"}},
});
inline constexpr std::size_t kInvariantCount = std::size(kInvariants);

constexpr std::size_t index(Invariant i) { return static_cast<std::size_t>(i); }

}  // namespace relaysim::sim::webhook
