// The webhook platform's invariants (DESIGN.md §6): what its oracle checks on every run.
#pragma once

#include <cstdint>

#include "sim/oracle/ledger.h"

namespace relaysim::sim::webhook {

enum class Invariant : std::uint8_t { idem, deadline, nodup, noloss, retry, breaker, url };

// In Invariant's order.
inline constexpr InvariantInfo kInvariants[] = {
    {"W-idem", "one stored request per (cxid, request_id); duplicates answered with the original"},
    {"W-deadline", "no attempt after deadline_at; terminal by the deadline plus a bound"},
    {"W-nodup", "no attempt after a 2xx or in parallel; every endpoint duplicate explained"},
    {"W-noloss", "every acknowledged request reaches exactly one terminal state"},
    {"W-retry", "retry gaps respect backoff and Retry-After; no retry after a terminal verdict"},
    {"W-breaker", "no ServiceB call while open, bounded half-open probes, closed after recovery"},
    {"W-url", "each attempt's URL is one ServiceB held within the cache TTL"},
};
inline constexpr std::size_t kInvariantCount = std::size(kInvariants);

constexpr std::size_t index(Invariant i) { return static_cast<std::size_t>(i); }

}  // namespace relaysim::sim::webhook
