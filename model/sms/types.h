// The SMS gateway's nouns: a Message (one SMS to one recipient, accepted for a business under a
// dedup key), its Status and final Reason, its status history, and the Business row the back
// office keeps (quota and grant epoch) that every accept reads in its own transaction.
//
// Life of a message (every non-final status has a due time; see model/sms/store.h):
//
//   pending ──claim──▶ in_flight ──complete──▶ submitted   (a provider certainly accepted it)
//      ▲                  │                    unknown     (the outcome is ambiguous)
//      └──── complete ────┤                    pending     (retry later, or async)
//                         └──────────────────▶ failed | suppressed
//   submitted ──receipt──▶ delivered | undelivered;   ──receipt due passes──▶ unconfirmed
//   unknown   ──claim────▶ in_flight (resent on the same provider, or failed when configured)
//
// A receipt finalises any message that is not final yet: it proves a provider accepted it, so an
// unknown or pending message is not sent again.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/lifecycle.h"
#include "model/core/names.h"
#include "model/core/time.h"
#include "model/sms/auth.h"

namespace relaysim::sms {

using MessageId = std::uint64_t;
using ClaimToken = std::uint64_t;
using PodId = std::uint32_t;
using ProviderId = std::uint16_t;  // index into the platform's providers
using Recipient = std::uint64_t;   // a phone number's digits (E.164) as a number

inline constexpr ProviderId kNoProvider = UINT16_MAX;

// Non-final statuses come first: stores select open work with `status < kFirstFinal`.
enum class Status : std::uint8_t {
  pending,      // waiting for its due time: send_at, the next attempt, or async sending
  in_flight,    // claimed by a pod under a lease; its due time is the lease's expiry
  unknown,      // a provider may or may not have accepted it; its due time is when to act
  submitted,    // a provider accepted it; its due time is when the receipt is overdue
  delivered,    // the receipt said delivered
  undelivered,  // the receipt said the network could not deliver it
  unconfirmed,  // accepted, but no receipt came within the validity period
  failed,       // it never went out for certain (see Reason)
  suppressed,   // a marketing message not sent by rule (opt-out, quiet hours, frequency cap)
};
inline constexpr auto kStatusNames = names<Status>({
    {Status::pending, "pending"}, {Status::in_flight, "in_flight"}, {Status::unknown, "unknown"},
    {Status::submitted, "submitted"}, {Status::delivered, "delivered"}, {Status::undelivered, "undelivered"},
    {Status::unconfirmed, "unconfirmed"}, {Status::failed, "failed"}, {Status::suppressed, "suppressed"}});
constexpr std::string_view to_string(Status s) { return kStatusNames[s]; }
inline constexpr int kStatusCount = kStatusNames.count;
inline constexpr Status kFirstFinal = Status::delivered;

constexpr bool is_final(Status s) { return s >= kFirstFinal; }

// The life of a message (model/core/lifecycle.h): the gateway makes only these moves, and the
// oracle holds every run to them (S-lifecycle). A final state is never left.
inline constexpr Move<Status> kMessageLifecycle[] = {
    {std::nullopt, Status::pending, "accepted"},
    {Status::pending, Status::in_flight, "claimed when due (at once, to send synchronously)"},
    {Status::unknown, Status::in_flight, "claimed when due: the compensation scan"},
    {Status::submitted, Status::in_flight, "claimed: its receipt is overdue"},
    {Status::in_flight, Status::in_flight, "rescued: the claim's lease expired"},
    {Status::in_flight, Status::pending, "a retry planned, or deferred"},
    {Status::in_flight, Status::unknown, "a submit's outcome is unknown"},
    {Status::in_flight, Status::submitted, "a provider accepted it"},
    {Status::in_flight, Status::failed, "it never went out for certain"},
    {Status::in_flight, Status::suppressed, "a marketing rule: opted out, quiet hours, frequency cap"},
    {Status::in_flight, Status::unconfirmed, "no receipt within its validity"},
    {Status::submitted, Status::delivered, "a receipt: delivered"},
    {Status::submitted, Status::undelivered, "a receipt: undelivered"},
    {Status::unknown, Status::delivered, "a receipt: delivered"},
    {Status::unknown, Status::undelivered, "a receipt: undelivered"},
    {Status::in_flight, Status::delivered, "a receipt: delivered"},
    {Status::in_flight, Status::undelivered, "a receipt: undelivered"},
    // A receipt may come for a submit the gateway never heard had gone through (its answer was
    // lost, or its pod crashed) while the message waits to be tried again.
    {Status::pending, Status::delivered, "a receipt: delivered"},
    {Status::pending, Status::undelivered, "a receipt: undelivered"},
};

// Why a message is where it is; `none` until it is final.
enum class Reason : std::uint8_t {
  none,
  receipt,        // delivered or undelivered: as its receipt said
  no_receipt,     // unconfirmed: the receipt never came
  refused,        // failed: every provider tried refused it for certain
  exhausted,      // failed: its attempts ran out
  expired,        // failed or suppressed: its validity passed before it could go out
  ambiguous,      // failed: the outcome was unknown and the platform is set to fail such messages
  opted_out,      // suppressed: the recipient opted out of marketing
  quiet_hours,    // suppressed: deferred by quiet hours past its validity
  frequency_cap,  // suppressed: the recipient had as many marketing messages as the cap allows
};
inline constexpr auto kReasonNames = names<Reason>({
    {Reason::none, "none"}, {Reason::receipt, "receipt"}, {Reason::no_receipt, "no_receipt"},
    {Reason::refused, "refused"}, {Reason::exhausted, "exhausted"}, {Reason::expired, "expired"},
    {Reason::ambiguous, "ambiguous"}, {Reason::opted_out, "opted_out"}, {Reason::quiet_hours, "quiet_hours"},
    {Reason::frequency_cap, "frequency_cap"}});
constexpr std::string_view to_string(Reason r) { return kReasonNames[r]; }
inline constexpr int kReasonCount = kReasonNames.count;

enum class Kind : std::uint8_t { single, bulk, scheduled, marketing, resend };
inline constexpr auto kKindNames = names<Kind>({
    {Kind::single, "single"}, {Kind::bulk, "bulk"}, {Kind::scheduled, "scheduled"}, {Kind::marketing, "marketing"},
    {Kind::resend, "resend"}});
constexpr std::string_view to_string(Kind k) { return kKindNames[k]; }
inline constexpr int kKindCount = kKindNames.count;

// How a request is answered, from its message's status (the answer a repeated request gets too):
// sent → success, failed → failure, in progress → pending.
enum class Answer : std::uint8_t { pending, success, failure };
inline constexpr auto kAnswerNames = names<Answer>({
    {Answer::pending, "pending"}, {Answer::success, "success"}, {Answer::failure, "failure"}});
constexpr std::string_view to_string(Answer a) { return kAnswerNames[a]; }
constexpr Answer answer_for(Status s) {
  switch (s) {
    case Status::pending:
    case Status::in_flight:
    case Status::unknown: return Answer::pending;
    case Status::failed:
    case Status::suppressed: return Answer::failure;
    default: return Answer::success;
  }
}

// How far ahead a message may be scheduled: its send_at plus the platform's validity must stay
// far inside what a Time holds (until 2262).
inline constexpr Duration kLongestSchedule = std::chrono::hours(24 * 366);

// The quota period a time falls in: periods are `length` long from the start of the run.
constexpr std::uint32_t quota_period(Time at, Duration length) {
  return static_cast<std::uint32_t>(at.time_since_epoch() / length);
}

// Whether a message that ends `final_status` gives its quota unit back: only a failure where no
// provider ever certainly accepted it. Undelivered and unconfirmed messages were taken by a
// provider (and billed by it); suppressed ones were judged by the platform's own rules, which the
// business chose.
constexpr bool refunds(Status final_status, bool ever_accepted) {
  return final_status == Status::failed && !ever_accepted;
}

// A message as stored. Strings are owned; stores reuse a caller's MessageRow to avoid allocation.
struct MessageRow {
  MessageId id = 0;
  BusinessId business = 0;
  std::string biz_type;
  std::string biz_id;
  Recipient recipient = 0;
  std::uint32_t template_id = 0;
  std::uint64_t content = 0;     // a hash of what is sent (recipient, template, parameters)
  std::uint32_t campaign = 0;    // marketing: the campaign; 0 otherwise
  MessageId resend_of = 0;       // resend: the failed message it resends
  Time created_at{};
  Time send_at{};                // never submitted before this
  Time due_at{};                 // see Status
  Time updated_at{};
  Time final_at{};               // when it became final
  std::uint32_t period = 0;      // the quota period it was charged in
  ClaimToken claim_token = 0;
  PodId lease_owner = 0;
  std::uint16_t attempts = 0;    // submits a provider answered, or that may have reached it
  std::uint16_t segments = 1;
  ProviderId provider = kNoProvider;  // the provider of the last attempt
  Kind kind = Kind::single;
  Status status = Status::pending;
  Reason reason = Reason::none;
  bool charged = false;          // holds a quota unit now
  bool accepted = false;         // a provider certainly accepted it at some attempt
  bool operator==(const MessageRow&) const = default;
};

// One change of a message's status, as the history keeps it (append-only).
struct StatusChange {
  Time at{};
  Status status = Status::pending;
  Reason reason = Reason::none;
  ProviderId provider = kNoProvider;
  PodId pod = 0;  // 0: the store itself (accept, receipt)
  bool operator==(const StatusChange&) const = default;
};

// What the back office keeps of a business for the accept transaction.
enum class GrantState : std::uint8_t { applied, approved, rejected, revoked };
inline constexpr auto kGrantStateNames = names<GrantState>({
    {GrantState::applied, "applied"}, {GrantState::approved, "approved"}, {GrantState::rejected, "rejected"},
    {GrantState::revoked, "revoked"}});
constexpr std::string_view to_string(GrantState g) { return kGrantStateNames[g]; }

struct BusinessRow {
  BusinessId id = 0;
  std::string name;
  GrantState state = GrantState::applied;
  std::uint64_t quota = 0;  // messages per quota period
  std::uint64_t epoch = 0;  // the grant's epoch; tokens of another epoch are revoked
  // What its application asked for, and its tokens grant: kept in the store, so that any process
  // of the gateway issues the same tokens.
  std::vector<std::string> senders;
  std::vector<std::uint32_t> templates;
  bool operator==(const BusinessRow&) const = default;
};

}  // namespace relaysim::sms
