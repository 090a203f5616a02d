#include "model/sms/backoffice.h"

#include <utility>

#include "model/core/assert.h"

namespace relaysim::sms {

BackOffice::BackOffice(Store& store, TokenCodec& codec, const Clock& clock, Duration token_lifetime,
                       Duration quota_period)
    : store_(store), codec_(codec), clock_(clock), token_lifetime_(token_lifetime), quota_period_(quota_period) {
  RELAYSIM_ASSERT(token_lifetime > Duration::zero() && quota_period > Duration::zero(), "positive durations");
}

BusinessId BackOffice::apply(const Application& application) {
  return store_.add_business(
      {0, application.name, GrantState::applied, application.quota, 1, application.senders, application.templates});
}

AdminOutcome BackOffice::move(BusinessId business, GrantState from, GrantState to, bool new_epoch) {
  if (store_.move_business(business, from, to, new_epoch)) return AdminOutcome::done;
  return store_.business(business) ? AdminOutcome::wrong_state : AdminOutcome::not_found;
}

AdminOutcome BackOffice::approve(BusinessId business) {
  const AdminOutcome first = move(business, GrantState::applied, GrantState::approved, false);
  if (first != AdminOutcome::wrong_state) return first;
  // A revoked business approved again: its epoch moved on when it was revoked.
  return move(business, GrantState::revoked, GrantState::approved, false);
}

AdminOutcome BackOffice::reject(BusinessId business) {
  return move(business, GrantState::applied, GrantState::rejected, false);
}

AdminOutcome BackOffice::revoke(BusinessId business) {
  return move(business, GrantState::approved, GrantState::revoked, true);
}

std::optional<std::string> BackOffice::issue_token(BusinessId business) {
  std::optional<BusinessRow> row = store_.business(business);
  if (!row || row->state != GrantState::approved) return std::nullopt;
  TokenClaims c;
  c.business = business;
  c.name = std::move(row->name);
  c.senders = std::move(row->senders);
  c.templates = std::move(row->templates);
  const std::int64_t now_s = to_ns(clock_.now()) / 1'000'000'000;
  c.issued_at = now_s;
  c.expires_at = now_s + std::chrono::duration_cast<std::chrono::seconds>(token_lifetime_).count();
  c.epoch = row->epoch;
  return codec_.issue(c);
}

AuthFault BackOffice::standing(BusinessId business, std::uint64_t epoch) {
  const std::optional<BusinessRow> row = store_.business(business);
  return row && row->state == GrantState::approved && row->epoch == epoch ? AuthFault::none : AuthFault::revoked;
}

std::optional<MessageStatus> BackOffice::status(BusinessId business, std::string_view biz_type,
                                                std::string_view biz_id) {
  const std::optional<MessageId> id = store_.find(business, biz_type, biz_id);
  if (!id) return std::nullopt;
  std::optional<MessageRow> row = store_.get(*id);
  if (!row) return std::nullopt;
  return MessageStatus{std::move(*row), store_.history(*id)};
}

std::optional<QuotaView> BackOffice::quota(BusinessId business) {
  const std::optional<BusinessRow> row = store_.business(business);
  if (!row) return std::nullopt;
  QuotaView v;
  v.period = period_now();
  v.quota = row->quota;
  v.used = store_.quota_used(business, v.period);
  v.left = v.quota > v.used ? v.quota - v.used : 0;
  v.period_ends = Time{} + quota_period_ * (static_cast<std::int64_t>(v.period) + 1);
  return v;
}

}  // namespace relaysim::sms
