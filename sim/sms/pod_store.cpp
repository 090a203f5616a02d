#include "sim/sms/pod_store.h"

#include "model/core/assert.h"

namespace relaysim::sim::sms {

using namespace relaysim::sms;

// On SQLite, per message: its insert (its history is in the row), and a claim token when it is
// claimed at once; then the quota charge.
AcceptResult PodStore::accept(const AcceptRequest& r) {
  RELAYSIM_ASSERT(!r.messages.empty(), "a request carries at least one message");
  RELAYSIM_ASSERT(r.claim_for == 0 || r.lease > Duration::zero(), "a claim at accept has a lease longer than zero");
  int writes = 1;
  for (const NewMessage& m : r.messages) writes += r.claim_for != 0 && m.send_at <= r.now ? 2 : 1;
  return guard_.run(writes, [&] { return store_.accept(r); });
}

// The claim token, then the row (with its history entry).
std::optional<Status> PodStore::claim_due(Time now, PodId pod, Duration lease, MessageRow& out) {
  RELAYSIM_ASSERT(pod != 0 && lease > Duration::zero(), "a claim is held by a pod for a lease longer than zero");
  return guard_.run(2, [&] { return store_.claim_due(now, pod, lease, out); });
}

// The row, its history entry in it (a refund's two writes follow; a crash fails the first write).
bool PodStore::complete(MessageId id, ClaimToken token, const Completion& c) {
  RELAYSIM_ASSERT(c.status != relaysim::sms::Status::in_flight, "a completion must leave in_flight");
  return guard_.run(1, [&] { return store_.complete(id, token, c); });
}

// The row, with its history entry.
ReceiptOutcome PodStore::receipt(MessageId id, bool delivered, Time at) {
  return guard_.run(1, [&] { return store_.receipt(id, delivered, at); });
}

std::optional<Time> PodStore::next_due() {
  return guard_.run(0, [&] { return store_.next_due(); });
}

relaysim::sms::BusinessId PodStore::add_business(const BusinessRow& row) {
  return guard_.run(1, [&] { return store_.add_business(row); });
}

void PodStore::put_business(const BusinessRow& row) {
  RELAYSIM_ASSERT(row.id != 0, "business ids count from 1");
  guard_.run(1, [&] { store_.put_business(row); });
}

bool PodStore::move_business(BusinessId id, GrantState from, GrantState to, bool new_epoch) {
  return guard_.run(1, [&] { return store_.move_business(id, from, to, new_epoch); });
}

std::optional<BusinessRow> PodStore::business(BusinessId id) {
  return guard_.run(0, [&] { return store_.business(id); });
}

std::uint64_t PodStore::quota_used(BusinessId id, std::uint32_t period) {
  return guard_.run(0, [&] { return store_.quota_used(id, period); });
}

std::optional<MessageRow> PodStore::get(MessageId id) {
  return guard_.run(0, [&] { return store_.get(id); });
}

std::optional<MessageId> PodStore::find(BusinessId business, std::string_view biz_type, std::string_view biz_id) {
  return guard_.run(0, [&] { return store_.find(business, biz_type, biz_id); });
}

std::vector<StatusChange> PodStore::history(MessageId id) {
  return guard_.run(0, [&] { return store_.history(id); });
}

std::vector<MessageId> PodStore::messages(const MessageQuery& query) {
  return guard_.run(0, [&] { return store_.messages(query); });
}

CampaignStart PodStore::start_campaign(const NewCampaign& c) {
  return guard_.run(1, [&] { return store_.start_campaign(c); });
}

// The claim token and the row.
bool PodStore::claim_campaign(Time now, PodId pod, Duration lease, CampaignRow& out) {
  RELAYSIM_ASSERT(pod != 0 && lease > Duration::zero(), "a campaign is claimed by a pod for a lease longer than zero");
  return guard_.run(2, [&] { return store_.claim_campaign(now, pod, lease, out); });
}

bool PodStore::advance_campaign(CampaignId id, ClaimToken token, const CampaignProgress& p) {
  return guard_.run(1, [&] { return store_.advance_campaign(id, token, p); });
}

std::optional<Time> PodStore::next_campaign_due() {
  return guard_.run(0, [&] { return store_.next_campaign_due(); });
}

std::optional<CampaignRow> PodStore::campaign(CampaignId id) {
  return guard_.run(0, [&] { return store_.campaign(id); });
}

// The window's pruning (and the place taken, when there is room).
bool PodStore::take_cap(Recipient recipient, MessageId id, Time now, const FrequencyCap& cap) {
  RELAYSIM_ASSERT(cap.per > Duration::zero(), "a frequency cap's window is longer than zero");
  RELAYSIM_ASSERT(id != 0, "a place in the cap is held by a message");
  return guard_.run(1, [&] { return store_.take_cap(recipient, id, now, cap); });
}

}  // namespace relaysim::sim::sms
