// The SMS gateway's invariants (S-*): what its oracle checks on every run.
#pragma once

#include <cstdint>

#include "model/core/names.h"
#include "sim/oracle/ledger.h"

namespace relaysim::sim::sms {

enum class Invariant : std::uint8_t { dedup, quota, scope, limit, async, final, schedule, failover, dup, marketing, retry, lifecycle };

// One row per invariant, in Invariant's order (model/core/names.h checks it).
inline constexpr auto kInvariants = enum_rows<Invariant, InvariantInfo>({
    {Invariant::dedup, {"S-dedup", "one message per (business, biz_type, biz_id); a repeated request is answered with the first one's message and its outcome so far"}},
    {Invariant::quota, {"S-quota", "a business's quota is never exceeded, and a request refused for quota only when it did not fit; each message charged once, refunded only when no provider certainly took it"}},
    {Invariant::scope, {"S-scope", "every bad token (forged, expired, outside its scope) refused; no good token refused"}},
    {Invariant::limit, {"S-limit", "every shared limit decides as its algorithm's definition says, store restarts aside; while the store is down a pod's local limit admits no more than its share, and deny admits nothing"}},
    {Invariant::async, {"S-async", "async mode entered when, and only when, one of its rules held on the pod's sync submits; left by its timer on time or by good probes; no sync send while in it"}},
    {Invariant::final, {"S-final", "every accepted message kept, and reaching at most one final state, never left"}},
    {Invariant::schedule, {"S-schedule", "no message submitted before its send_at, nor ended as expired before its validity after send_at ran out"}},
    {Invariant::failover, {"S-failover", "a certain no (throttled, unavailable) is followed at once by an untried provider while one is left; no other provider tried after an ambiguous outcome; no submit after a certain accept was recorded that its claim could see"}},
    {Invariant::dup, {"S-dup", "every duplicate SMS (a second provider accept of one message) explained by an ambiguous outcome"}},
    {Invariant::marketing, {"S-marketing", "no marketing submit to a recipient who opted out, in the recipient's quiet hours, or without a place in the frequency cap's window; no place taken past the cap (a message holds a place while one it took is in the window); no suppression for a reason that was not true"}},
    {Invariant::retry, {"S-retry", "no message submitted more than its business's max_attempts times as the gateway counts them (a crash's submits go uncounted), nor given up as exhausted before that many"}},
    {Invariant::lifecycle, {"S-lifecycle", "every change of a message's status is a move of its lifecycle (kMessageLifecycle, docs/lifecycles.md)"}},
});
inline constexpr std::size_t kInvariantCount = std::size(kInvariants);

constexpr std::size_t index(Invariant i) { return static_cast<std::size_t>(i); }

}  // namespace relaysim::sim::sms
