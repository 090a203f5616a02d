#include "model/sms/memory_store.h"

#include <algorithm>
#include <tuple>

#include "model/core/assert.h"
#include "model/core/random.h"
#include "model/sms/mutants.h"

namespace relaysim::sms {

namespace {
std::uint64_t ledger_key(BusinessId business, std::uint32_t period) {
  return std::uint64_t{business} << 32 | period;
}
}  // namespace

std::uint64_t MemoryStore::key_hash(BusinessId business, std::string_view biz_type, std::string_view biz_id) {
  const std::uint64_t type = planted(mutant::dedup_on_biz_id_alone) ? 0 : hash_bytes(biz_type);
  return mix64((std::uint64_t{business} * 0x9e3779b97f4a7c15ULL ^ type) * 31 + hash_bytes(biz_id));
}

std::uint32_t MemoryStore::find_slot(BusinessId business, std::string_view biz_type, std::string_view biz_id) const {
  const std::uint64_t found = keys_.find(key_hash(business, biz_type, biz_id), [&](std::uint64_t s) {
    const Row& r = rows_[static_cast<std::uint32_t>(s - 1)];
    return r.business == business && (r.biz_type() == biz_type || planted(mutant::dedup_on_biz_id_alone)) &&
           r.biz_id() == biz_id;
  });
  return found == 0 ? kNone : static_cast<std::uint32_t>(found - 1);
}

void MemoryStore::copy_out(const Row& r, MessageRow& out) const {
  out.id = r.id;
  out.business = r.business;
  out.biz_type.assign(r.biz_type());
  out.biz_id.assign(r.biz_id());
  out.recipient = r.recipient;
  out.template_id = r.template_id;
  out.content = r.content;
  out.campaign = r.campaign;
  out.resend_of = r.resend_of;
  out.created_at = r.created_at;
  out.send_at = r.send_at;
  out.due_at = r.due_at;
  // Every change of a row appends to its history: its newest entry says when it was last
  // updated, and when it became final if it is.
  out.updated_at = r.last_change == kNone ? Time{} : changes_[r.last_change].change.at;
  out.final_at = is_final(r.status) ? out.updated_at : Time{};
  out.period = r.period;
  out.claim_token = r.claim_token;
  out.lease_owner = r.lease_owner;
  out.attempts = r.attempts;
  out.segments = r.segments;
  out.provider = r.provider;
  out.kind = r.kind;
  out.status = r.status;
  out.reason = r.reason;
  out.charged = r.charged;
  out.accepted = r.accepted;
}

void MemoryStore::charge(BusinessId business, std::uint32_t period, std::int64_t units) {
  RELAYSIM_ASSERT(units != 0, "a charge or a refund moves at least one unit");
  std::uint64_t& used = used_[ledger_key(business, period)];
  if (units >= 0) {
    used += static_cast<std::uint64_t>(units);
    counts_.charged += static_cast<std::uint64_t>(units);
    return;
  }
  const auto refund = static_cast<std::uint64_t>(-units);
  RELAYSIM_ASSERT(used >= refund && counts_.charged >= refund, "a refund needs a charge");
  used -= refund;
  counts_.charged -= refund;
}

void MemoryStore::move(std::uint32_t slot, Status status, Reason reason, Time at, PodId pod, DueLane lane) {
  Row& r = rows_[slot];
  // A message with no history yet is being accepted (and, to be sent at once, claimed with it).
  const bool accepted = r.last_change == kNone;
  RELAYSIM_ASSERT(accepted ? allows(kMessageLifecycle, std::nullopt, Status::pending) &&
                                 (status == Status::pending || allows(kMessageLifecycle, Status::pending, status))
                           : allows(kMessageLifecycle, r.status, status),
                  "a message moves by kMessageLifecycle");
  --counts_.by_status[static_cast<int>(r.status)];
  ++counts_.by_status[static_cast<int>(status)];
  r.status = status;
  r.reason = reason;
  if (is_final(status)) {
    r.due_at = Time{};
    ++counts_.by_reason[static_cast<int>(reason)];
    due_.remove(slot);
  } else if (status == Status::unknown && planted(mutant::compensation_skips_status)) {
    due_.remove(slot);
  } else {
    due_.set(slot, r.id, r.due_at, lane);
  }
  const std::uint32_t c = changes_.acquire();
  changes_[c] = StoredChange{{at, status, reason, r.provider, pod}, r.last_change};
  r.last_change = c;
}

AcceptResult MemoryStore::accept(const AcceptRequest& req) {
  RELAYSIM_ASSERT(!req.messages.empty(), "a request carries at least one message");
  RELAYSIM_ASSERT(req.claim_for == 0 || req.lease > Duration::zero(), "a claim at accept has a lease longer than zero");
  // The row is read in place: a copy would allocate its name on every send.
  const auto b = businesses_.find(req.business);
  const BusinessRow* biz = b == businesses_.end() ? nullptr : &b->second;
  AcceptResult result = judge_accept(req, biz, quota_used(req.business, req.period),
                                     [&](std::string_view type, std::string_view id) -> std::optional<ExistingMessage> {
                                       const std::uint32_t slot = find_slot(req.business, type, id);
                                       if (slot == kNone) return std::nullopt;
                                       const Row& r = rows_[slot];
                                       return ExistingMessage{r.id, r.content, r.status};
                                     },
                                     [&](MessageId id) -> std::optional<Original> {
                                       const std::uint32_t slot = ids_.find(id);
                                       if (slot == DenseIdMap::kNone) return std::nullopt;
                                       return Original{rows_[slot].business, rows_[slot].status};
                                     });
  if (result.outcome != AcceptOutcome::accepted) return result;
  for (const NewMessage& m : req.messages) {
    if (m.biz_type.size() > UINT16_MAX) throw StoreError(StoreFailure::other, "biz_type must be shorter than 64 KiB");
    const std::uint32_t slot = rows_.acquire();
    Row& r = rows_[slot];
    r = Row{};
    r.id = next_id_++;
    r.text.assign(m.biz_type, m.biz_id);
    r.type_len = static_cast<std::uint16_t>(m.biz_type.size());
    r.business = req.business;
    r.recipient = m.recipient;
    r.template_id = m.template_id;
    r.content = m.content;
    r.segments = m.segments;
    r.kind = m.kind;
    r.campaign = m.campaign;
    r.resend_of = m.resend_of;
    r.created_at = req.now;
    r.send_at = m.send_at;
    r.period = req.period;
    r.charged = true;
    const bool claim = req.claim_for != 0 && m.send_at <= req.now;
    if (claim) {
      r.claim_token = next_token_++;
      r.lease_owner = req.claim_for;
      r.due_at = req.now + req.lease;
      if (result.first_token == 0) result.first_token = r.claim_token;
    } else {
      r.due_at = planted(mutant::scheduled_sent_early) ? req.now : std::max(m.send_at, req.now);
    }
    ids_.insert(r.id, slot);
    keys_.insert(key_hash(req.business, m.biz_type, m.biz_id), slot + 1);
    ++counts_.by_status[static_cast<int>(Status::pending)];  // move() counts it into its status
    move(slot, claim ? Status::in_flight : Status::pending, Reason::none, req.now, claim ? req.claim_for : 0,
         claim ? DueLane::b : DueLane::a);
    if (result.first == 0) result.first = r.id;
  }
  charge(req.business, req.period, static_cast<std::int64_t>(req.messages.size()));
  result.quota_left -= req.messages.size();
  return result;
}

std::optional<Status> MemoryStore::claim_due(Time now, PodId pod, Duration lease, MessageRow& out) {
  RELAYSIM_ASSERT(pod != 0, "a claim is held by a pod (0 means none)");
  RELAYSIM_ASSERT(lease > Duration::zero(), "a claim's lease is longer than zero");
  const DueOrder::Entry* first = due_.front();
  if (first == nullptr || first->at > now) return std::nullopt;
  const std::uint32_t slot = first->slot;
  Row& r = rows_[slot];
  RELAYSIM_ASSERT(!is_final(r.status), "only open messages are due");
  const Status prior = r.status;
  r.claim_token = next_token_++;
  r.lease_owner = pod;
  r.due_at = now + lease;
  move(slot, Status::in_flight, Reason::none, now, pod, DueLane::b);
  copy_out(r, out);
  return prior;
}

bool MemoryStore::complete(MessageId id, ClaimToken token, const Completion& c) {
  RELAYSIM_ASSERT(c.status != Status::in_flight, "a completion must leave in_flight");
  const std::uint32_t slot = ids_.find(id);
  if (slot == DenseIdMap::kNone) return false;
  Row& r = rows_[slot];
  if (r.status != Status::in_flight || r.claim_token != token) return false;
  if (c.attempts > 0) {
    r.attempts = static_cast<std::uint16_t>(r.attempts + c.attempts);
    r.provider = c.provider;
    if (planted(mutant::quota_charged_per_attempt) && r.attempts > 1) charge(r.business, r.period, 1);
  }
  r.accepted = r.accepted || c.accepted;
  r.lease_owner = 0;
  if (!is_final(c.status)) r.due_at = c.due_at;
  if (is_final(c.status) && r.charged && refunds(c.status, r.accepted)) {
    r.charged = false;
    charge(r.business, r.period, -1);
  }
  // A submitted message comes due when its receipt is overdue, now + the receipt timeout: that
  // grows with every completion, so it fits a lane of its own.
  move(slot, c.status, c.reason, c.at, c.pod, c.status == Status::submitted ? DueLane::c : DueLane::none);
  return true;
}

ReceiptOutcome MemoryStore::receipt(MessageId id, bool delivered, Time at) {
  const std::uint32_t slot = ids_.find(id);
  if (slot == DenseIdMap::kNone) return ReceiptOutcome::not_found;
  Row& r = rows_[slot];
  if (is_final(r.status)) return ReceiptOutcome::already_final;
  r.accepted = true;
  r.lease_owner = 0;
  move(slot, delivered ? Status::delivered : Status::undelivered, Reason::receipt, at, 0, DueLane::none);
  return ReceiptOutcome::applied;
}

std::optional<Time> MemoryStore::next_due() {
  const DueOrder::Entry* first = due_.front();
  if (first == nullptr) return std::nullopt;
  return first->at;
}

BusinessId MemoryStore::add_business(const BusinessRow& row) {
  const BusinessId id = businesses_.empty() ? 1 : businesses_.rbegin()->first + 1;
  BusinessRow& added = businesses_[id] = row;
  added.id = id;
  return id;
}

void MemoryStore::put_business(const BusinessRow& row) {
  RELAYSIM_ASSERT(row.id != 0, "business ids count from 1");
  businesses_[row.id] = row;
}

bool MemoryStore::move_business(BusinessId id, GrantState from, GrantState to, bool new_epoch) {
  const auto it = businesses_.find(id);
  if (it == businesses_.end() || it->second.state != from) return false;
  it->second.state = to;
  if (new_epoch) ++it->second.epoch;
  return true;
}

std::optional<BusinessRow> MemoryStore::business(BusinessId id) {
  const auto it = businesses_.find(id);
  if (it == businesses_.end()) return std::nullopt;
  return it->second;
}

std::uint64_t MemoryStore::quota_used(BusinessId id, std::uint32_t period) {
  const auto it = used_.find(ledger_key(id, period));
  return it == used_.end() ? 0 : it->second;
}

std::optional<MessageRow> MemoryStore::get(MessageId id) {
  const std::uint32_t slot = ids_.find(id);
  if (slot == DenseIdMap::kNone) return std::nullopt;
  MessageRow out;
  copy_out(rows_[slot], out);
  return out;
}

std::optional<MessageId> MemoryStore::find(BusinessId business, std::string_view biz_type, std::string_view biz_id) {
  const std::uint32_t slot = find_slot(business, biz_type, biz_id);
  if (slot == kNone) return std::nullopt;
  return rows_[slot].id;
}

std::vector<StatusChange> MemoryStore::history(MessageId id) {
  std::vector<StatusChange> out;
  const std::uint32_t slot = ids_.find(id);
  if (slot == DenseIdMap::kNone) return out;
  for (std::uint32_t c = rows_[slot].last_change; c != kNone; c = changes_[c].previous) {
    out.push_back(changes_[c].change);
  }
  std::reverse(out.begin(), out.end());  // the list runs newest first
  return out;
}

std::vector<MessageId> MemoryStore::messages(const MessageQuery& q) {
  // A scan: the back office's queries are rare next to sends, and an index per business would
  // cost every pending message its bytes.
  std::vector<MessageId> out;
  for (MessageId id = 1; id < next_id_ && out.size() < q.limit; ++id) {
    const std::uint32_t slot = ids_.find(id);
    if (slot == DenseIdMap::kNone) continue;
    const Row& r = rows_[slot];
    if (r.business != q.business || r.created_at < q.from || r.created_at >= q.to) continue;
    if (q.status && r.status != *q.status) continue;
    out.push_back(id);
  }
  return out;
}

StoreCounts MemoryStore::counts() { return counts_; }

CampaignStart MemoryStore::start_campaign(const NewCampaign& c) {
  const auto b = businesses_.find(c.business);
  const auto same_key = [&](const CampaignRow& row) {
    return row.business == c.business && row.biz_type == c.biz_type && row.biz_id == c.biz_id;
  };
  const auto existing = std::find_if(campaigns_.begin(), campaigns_.end(), same_key);
  CampaignStart start = judge_campaign(c, b == businesses_.end() ? nullptr : &b->second,
                                       existing == campaigns_.end() ? nullptr : &*existing);
  if (start.outcome != AcceptOutcome::accepted) return start;
  CampaignRow& row = campaigns_.emplace_back();
  row.id = static_cast<CampaignId>(campaigns_.size());
  row.business = c.business;
  row.epoch = c.epoch;
  row.biz_type.assign(c.biz_type);
  row.biz_id.assign(c.biz_id);
  row.filter.assign(c.filter);
  row.template_id = c.template_id;
  row.content = c.content;
  row.segments = c.segments;
  row.created_at = c.now;
  row.send_at = c.send_at;
  row.due_at = c.now;
  start.id = row.id;
  return start;
}

bool MemoryStore::claim_campaign(Time now, PodId pod, Duration lease, CampaignRow& out) {
  RELAYSIM_ASSERT(pod != 0, "a campaign is claimed by a pod (0 means none)");
  RELAYSIM_ASSERT(lease > Duration::zero(), "a campaign's claim lasts longer than zero");
  for (CampaignRow& row : campaigns_) {
    if (row.state != CampaignState::expanding || row.due_at > now) continue;
    row.claim_token = next_token_++;
    row.owner = pod;
    row.due_at = now + lease;
    out = row;
    return true;
  }
  return false;
}

bool MemoryStore::advance_campaign(CampaignId id, ClaimToken token, const CampaignProgress& p) {
  if (id < 1 || id > campaigns_.size()) return false;
  CampaignRow& row = campaigns_[id - 1];
  if (row.state != CampaignState::expanding || row.claim_token != token) return false;
  row.cursor = p.cursor;
  row.messages += p.messages;
  row.skipped += p.skipped;
  row.state = p.state;
  row.stopped_by = p.stopped_by;
  row.due_at = p.state == CampaignState::expanding ? p.due_at : Time{};
  return true;
}

std::optional<Time> MemoryStore::next_campaign_due() {
  std::optional<Time> next;
  for (const CampaignRow& row : campaigns_) {
    if (row.state == CampaignState::expanding && (!next || row.due_at < *next)) next = row.due_at;
  }
  return next;
}

std::optional<CampaignRow> MemoryStore::campaign(CampaignId id) {
  if (id < 1 || id > campaigns_.size()) return std::nullopt;
  return campaigns_[id - 1];
}

bool MemoryStore::take_cap(Recipient recipient, MessageId id, Time now, const FrequencyCap& cap) {
  if (cap.count == 0) return true;
  RELAYSIM_ASSERT(cap.per > Duration::zero(), "a frequency cap's window is longer than zero");
  RELAYSIM_ASSERT(id != 0, "a place in the cap is held by a message");
  std::uint32_t& head = cap_heads_.try_emplace(recipient, kNone).first->second;
  // Newest first, taken in time order: count back to the first place out of (now - per, now].
  // The older places are kept (cap_places() lists every place taken).
  RELAYSIM_ASSERT(head == kNone || cap_places_[head].at <= now, "places in the cap are taken in time order");
  std::uint32_t held = 0;
  for (std::uint32_t at = head; at != kNone && cap_places_[at].at > now - cap.per; at = cap_places_[at].next) {
    if (cap_places_[at].message == id) return true;
    ++held;
  }
  if (cap_full(held, cap.count)) return false;
  const std::uint32_t slot = cap_places_.acquire();
  cap_places_[slot] = CapPlace{now, id, head};
  head = slot;
  return true;
}

std::vector<CapPlaceRow> MemoryStore::cap_places() {
  std::vector<CapPlaceRow> out;
  for (const auto& [recipient, head] : cap_heads_) {
    for (std::uint32_t at = head; at != kNone; at = cap_places_[at].next) {
      out.push_back({recipient, cap_places_[at].message, cap_places_[at].at});
    }
  }
  std::sort(out.begin(), out.end(), [](const CapPlaceRow& a, const CapPlaceRow& b) {
    return std::tie(a.recipient, a.at, a.message) < std::tie(b.recipient, b.at, b.message);
  });
  return out;
}

}  // namespace relaysim::sms
