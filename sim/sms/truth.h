// Ground truth of an SMS world: what really happened, including what the gateway cannot see (an
// SMS that went out though its answer was lost, a token the client knew to be bad). The oracle
// judges the gateway against these events; the metrics count them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/core/names.h"
#include "model/core/events.h"
#include "model/sms/events.h"
#include "model/sms/backoffice.h"
#include "model/sms/types.h"
#include "sim/sms/directory.h"

namespace relaysim::sim::sms {

using relaysim::sms::MessageId;
using relaysim::sms::ProviderId;

// What was wrong with a call's token, as the client made it.
enum class TokenKind : std::uint8_t { good, forged, expired, foreign };
inline constexpr auto kTokenKindNames = names<TokenKind>({
    {TokenKind::good, "good"}, {TokenKind::forged, "forged"}, {TokenKind::expired, "expired"},
    {TokenKind::foreign, "foreign"}});
constexpr std::string_view to_string(TokenKind k) { return kTokenKindNames[k]; }
inline constexpr int kTokenKindCount = kTokenKindNames.count;

// A client key as the client wrote it: "otp/k5" (its biz_type and biz_id; a bulk request's
// messages add "#i").
std::string key_text(std::uint64_t key);

// A client's call, made to a pod that is up: a send, or a campaign request. Both are requests the
// clients made (the footprint estimate counts a campaign request as one call too).
struct ClientCalled {
  std::uint64_t key;          // the client's request number: repeats and retries share it (its kind in the top byte)
  std::uint32_t business;     // index into the spec's businesses
  std::uint32_t messages;     // 0 for a campaign request: the pods make its messages later
  TokenKind token;
  bool repeat;                // a retry after a timeout, or a deliberate duplicate
  bool campaign;              // a campaign request (answered at once, never repeated)
  Time at;
};

// The client got its answer (before its timeout).
struct ClientAnswered {
  std::uint64_t key;
  TokenKind token;
  bool repeat;  // as ClientCalled
  const relaysim::sms::SendAnswer& answer;
  Time at;
  std::string_view label = {};  // how reports name the request; empty: key_text(key)
};

// The client gave up waiting (it may repeat the request).
struct ClientTimedOut {
  std::uint64_t key;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(40);
    fp.mix(key);
  }
};

// A client's call found no pod up.
struct ClientRejected {
  Time at;
  void mix(Fingerprint& fp) const { fp.mix(41); }
};

// What a provider did with one submit, decided when it arrives.
enum class Fate : std::uint8_t {
  accepted,     // sent, and the gateway hears so
  answer_lost,  // sent, but the answer never reaches the gateway (it times out)
  late,         // sent, but the answer comes after the gateway's timeout
  throttled,    // refused: over its rate (429)
  unavailable,  // refused before reading (503, an `error` outage)
  refused,      // refused for good
  swallowed,    // never read (a `timeout` outage): not sent, the gateway times out
};
inline constexpr auto kFateNames = names<Fate>({
    {Fate::accepted, "accepted"}, {Fate::answer_lost, "answer_lost"}, {Fate::late, "late"},
    {Fate::throttled, "throttled"}, {Fate::unavailable, "unavailable"}, {Fate::refused, "refused"},
    {Fate::swallowed, "swallowed"}});
constexpr std::string_view to_string(Fate f) { return kFateNames[f]; }
inline constexpr int kFateCount = kFateNames.count;
constexpr bool sent(Fate f) { return f == Fate::accepted || f == Fate::answer_lost || f == Fate::late; }

// A submit reached a provider; `fate` is what it did.
struct ProviderSubmitted {
  ProviderId provider;
  std::uint32_t pod;
  MessageId message;
  relaysim::sms::Recipient recipient;
  std::uint16_t attempt;
  Fate fate;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(42);
    fp.mix(message);
    fp.mix(static_cast<std::uint64_t>(provider) << 8 | static_cast<std::uint64_t>(fate));
    fp.mix(at);
  }
};


// The back office's admin acted (ground truth: the world made the call). `epoch`: the grant's
// epoch before the action (a revocation refuses every token of it from then on).
struct AdminActed {
  std::uint32_t business;  // index into the spec's businesses
  std::uint8_t action;     // AdminAction
  relaysim::sms::AdminOutcome outcome;
  std::uint64_t epoch;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(44);
    fp.mix(static_cast<std::uint64_t>(business) << 16 | static_cast<std::uint64_t>(action) << 8 |
           static_cast<std::uint64_t>(outcome));
  }
};

// The admin asked the back office about a business: its quota, and its latest message's status.
struct AdminQueried {
  std::uint32_t business;  // index into the spec's businesses
  const std::optional<relaysim::sms::QuotaView>& quota;
  const std::optional<relaysim::sms::MessageStatus>& latest;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(45);
    fp.mix(quota ? quota->used : 0);
    fp.mix(latest ? latest->message.id : 0);
  }
};

using WorldEvents = EventBus<AdminActed, AdminQueried, ClientCalled, ClientAnswered, ClientTimedOut, ClientRejected, ProviderSubmitted, OptedOut>;

}  // namespace relaysim::sim::sms
