#include "sim/sms/pod_store.h"

namespace relaysim::sim::sms {

using namespace relaysim::sms;

// On SQLite, per message: its insert (its history is in the row), and a claim token when it is
// claimed at once; then the quota charge.
AcceptResult PodStore::accept(const AcceptRequest& r) {
  int writes = 1;
  for (const NewMessage& m : r.messages) writes += r.claim_for != 0 && m.send_at <= r.now ? 2 : 1;
  return guard_.run(writes, [&] { return store_.accept(r); });
}

// The claim token, then the row (with its history entry).
std::optional<Status> PodStore::claim_due(Time now, PodId pod, Duration lease, MessageRow& out) {
  return guard_.run(2, [&] { return store_.claim_due(now, pod, lease, out); });
}

// The row, its history entry in it (a refund's two writes follow; a crash fails the first write).
bool PodStore::complete(MessageId id, ClaimToken token, const Completion& c) {
  return guard_.run(1, [&] { return store_.complete(id, token, c); });
}

// The row, with its history entry.
ReceiptOutcome PodStore::receipt(MessageId id, bool delivered, Time at) {
  return guard_.run(1, [&] { return store_.receipt(id, delivered, at); });
}

std::optional<Time> PodStore::next_due() {
  return guard_.run(0, [&] { return store_.next_due(); });
}

void PodStore::put_business(const BusinessRow& row) {
  guard_.run(1, [&] { store_.put_business(row); });
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
  return guard_.run(1, [&] { return store_.take_cap(recipient, id, now, cap); });
}

}  // namespace relaysim::sim::sms
