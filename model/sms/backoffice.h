// BackOffice: how a business comes to send SMS. It applies for resources (senders, templates, a
// quota per period); an admin approves or rejects; an approved business is issued tokens naming
// it and what it was granted; a revocation refuses every token issued so far. It also answers the
// business's questions: did my message go out and how, how much quota is left, which messages.
//
// Promises:
//  - A business's state moves applied → approved | rejected, approved → revoked → approved (a new
//    grant). Anything else is `wrong_state` and changes nothing.
//  - Revoking starts a new grant epoch in the store, so every token issued before is refused by
//    the very transaction that would accept its message (Store::accept), with no cache to wait
//    out. A re-approval issues tokens of the new epoch.
//  - Tokens are issued only to an approved business, for exactly its application's resources,
//    expiring `token_lifetime` after issue (by the gateway's clock).
//  - The quota is `quota` messages per period of `quota_period` from the start of the run.
// The store keeps each business's row: its application (name, resources, quota) and what the
// accept transaction reads (state, quota, epoch); this class holds nothing of its own, so every
// process sharing a store runs one back office.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/core/names.h"
#include "model/core/ports.h"
#include "model/sms/auth.h"
#include "model/sms/store.h"

namespace relaysim::sms {

// The most an application may ask for. Its tokens name every resource granted, and a token must
// fit the codec's bound (model/sms/jwt_codec.cpp takes at most 8 KiB) with room to spare: these
// make one of about 3 KiB at most.
inline constexpr std::size_t kMaxSenders = 16;
inline constexpr std::size_t kMaxSenderBytes = 64;
inline constexpr std::size_t kMaxTemplates = 64;
inline constexpr std::size_t kMaxNameBytes = 256;

struct Application {
  std::string name;
  std::vector<std::string> senders;
  std::vector<std::uint32_t> templates;
  std::uint64_t quota = 0;  // messages per quota period
};

enum class AdminOutcome : std::uint8_t { done, not_found, wrong_state };
inline constexpr auto kAdminOutcomeNames = names<AdminOutcome>({
    {AdminOutcome::done, "done"}, {AdminOutcome::not_found, "not_found"}, {AdminOutcome::wrong_state, "wrong_state"}});
constexpr std::string_view to_string(AdminOutcome o) { return kAdminOutcomeNames[o]; }

struct MessageStatus {
  MessageRow message;
  std::vector<StatusChange> history;
};

struct QuotaView {
  std::uint64_t quota = 0;
  std::uint64_t used = 0;
  std::uint64_t left = 0;
  std::uint32_t period = 0;
  Time period_ends{};
};

class BackOffice {
 public:
  BackOffice(Store& store, TokenCodec& codec, const Clock& clock, Duration token_lifetime, Duration quota_period);

  BusinessId apply(const Application& application);
  AdminOutcome approve(BusinessId business);
  AdminOutcome reject(BusinessId business);
  AdminOutcome revoke(BusinessId business);
  // A token for an approved business; nullopt otherwise.
  std::optional<std::string> issue_token(BusinessId business);

  // Whether a token that passed the Authorizer still speaks for its business: `revoked` when the
  // business is unknown, its grant is not approved, or it moved to another epoch; else `none`. (A
  // send learns this in its accept transaction; a query, which writes nothing, asks here.)
  AuthFault standing(BusinessId business, std::uint64_t epoch);

  std::optional<MessageStatus> status(BusinessId business, std::string_view biz_type, std::string_view biz_id);
  std::optional<QuotaView> quota(BusinessId business);
  std::vector<MessageId> messages(const MessageQuery& query) { return store_.messages(query); }
  std::uint32_t period_now() const { return quota_period(clock_.now(), quota_period_); }

 private:
  AdminOutcome move(BusinessId business, GrantState from, GrantState to, bool new_epoch);

  Store& store_;
  TokenCodec& codec_;
  const Clock& clock_;
  Duration token_lifetime_;
  Duration quota_period_;
};

}  // namespace relaysim::sms
