#include "model/sms/types.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "model/sms/mutants.h"
#include "model/sms/store.h"

namespace relaysim::sms {

namespace {
// Names in declaration order; the static_asserts keep each table as long as its enum.
constexpr std::array<std::string_view, kStatusCount> kStatusNames{
    "pending", "in_flight", "unknown", "submitted", "delivered", "undelivered", "unconfirmed", "failed", "suppressed"};
constexpr std::array<std::string_view, kReasonCount> kReasonNames{
    "none", "receipt", "no_receipt", "refused", "exhausted", "expired", "ambiguous", "opted_out", "quiet_hours",
    "frequency_cap"};
constexpr std::array<std::string_view, kKindCount> kKindNames{"single", "bulk", "scheduled", "marketing", "resend"};
constexpr std::array<std::string_view, kAcceptOutcomeCount> kAcceptNames{
    "accepted", "duplicate", "conflict", "revoked", "quota_exhausted", "unknown_business", "not_resendable"};
static_assert(static_cast<int>(Status::suppressed) + 1 == kStatusCount);
static_assert(static_cast<int>(Reason::frequency_cap) + 1 == kReasonCount);
static_assert(static_cast<int>(Kind::resend) + 1 == kKindCount);
static_assert(static_cast<int>(AcceptOutcome::not_resendable) + 1 == kAcceptOutcomeCount);

template <std::size_t N, class E>
std::string_view name_of(const std::array<std::string_view, N>& names, E e) {
  const auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : "?";
}
}  // namespace

bool names_a_key_twice(std::span<const NewMessage> messages) {
  if (messages.size() < 2) return false;
  const bool id_alone = planted(mutant::dedup_on_biz_id_alone);
  std::vector<std::pair<std::string_view, std::string_view>> keys;
  keys.reserve(messages.size());
  for (const NewMessage& m : messages) keys.emplace_back(m.biz_id, id_alone ? std::string_view{} : m.biz_type);
  std::sort(keys.begin(), keys.end());
  return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
}

std::string_view to_string(Status s) { return name_of(kStatusNames, s); }
std::string_view to_string(Reason r) { return name_of(kReasonNames, r); }
std::string_view to_string(Kind k) { return name_of(kKindNames, k); }
std::string_view to_string(AcceptOutcome o) { return name_of(kAcceptNames, o); }

std::string_view to_string(Answer a) {
  switch (a) {
    case Answer::pending: return "pending";
    case Answer::success: return "success";
    case Answer::failure: return "failure";
  }
  return "?";
}

std::string_view to_string(GrantState g) {
  switch (g) {
    case GrantState::applied: return "applied";
    case GrantState::approved: return "approved";
    case GrantState::rejected: return "rejected";
    case GrantState::revoked: return "revoked";
  }
  return "?";
}

std::string_view to_string(CampaignState s) {
  switch (s) {
    case CampaignState::expanding: return "expanding";
    case CampaignState::done: return "done";
    case CampaignState::stopped: return "stopped";
  }
  return "?";
}

CampaignStart judge_campaign(const NewCampaign& c, const BusinessRow* business, const CampaignRow* existing) {
  CampaignStart start;
  if (business == nullptr) {
    start.outcome = AcceptOutcome::unknown_business;
  } else if (business->state != GrantState::approved || business->epoch != c.epoch) {
    start.outcome = AcceptOutcome::revoked;
  } else if (existing != nullptr) {
    const bool same = existing->filter == c.filter && existing->template_id == c.template_id &&
                      existing->content == c.content && existing->send_at == c.send_at;
    start.outcome = same ? AcceptOutcome::duplicate : AcceptOutcome::conflict;
    start.id = existing->id;
  }
  return start;
}

std::string_view to_string(ReceiptOutcome o) {
  switch (o) {
    case ReceiptOutcome::applied: return "applied";
    case ReceiptOutcome::already_final: return "already_final";
    case ReceiptOutcome::not_found: return "not_found";
  }
  return "?";
}

std::string_view to_string(StoreOp op) {
  switch (op) {
    case StoreOp::accept: return "accept";
    case StoreOp::claim: return "claim";
    case StoreOp::complete: return "complete";
    case StoreOp::receipt: return "receipt";
    case StoreOp::next_due: return "next_due";
    case StoreOp::back_office: return "back_office";
    case StoreOp::query: return "query";
    case StoreOp::campaign: return "campaign";
    case StoreOp::cap: return "cap";
  }
  return "?";
}

}  // namespace relaysim::sms
