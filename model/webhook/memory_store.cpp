#include "model/webhook/memory_store.h"

#include <algorithm>
#include <utility>

#include "model/core/assert.h"
#include "model/webhook/mutants.h"

namespace relaysim::webhook {

std::uint64_t MemoryStore::key_hash(std::string_view cxid, std::string_view request_id) {
  if (planted(mutant::key_ignores_cxid)) return mix64(hash_bytes(request_id));
  return mix64(hash_bytes(cxid) * 31 + hash_bytes(request_id));
}

MemoryStore::Row* MemoryStore::row(RequestId id) {
  const std::uint32_t slot = ids_.find(id);
  return slot == DenseIdMap::kNone ? nullptr : &rows_[slot];
}

void MemoryStore::copy_out(const Row& r, RequestRow& out) {
  out.id = r.id;
  out.cxid.assign(r.cxid());
  out.request_id.assign(r.request_id());
  if (!planted(mutant::claim_keeps_old_payload) || out.payload.empty()) out.payload.assign(r.payload());
  out.created_at = r.created_at;
  out.deadline_at = r.deadline_at;
  out.status = r.status;
  out.reason = r.reason;
  out.attempts = r.attempts;
  out.deferrals = r.deferrals;
  out.replays = r.replays;
  out.due_at = r.due_at;
  out.not_before = r.not_before;
  out.last_delay = r.last_delay;
  out.lease_owner = r.lease_owner;
  out.claim_token = r.claim_token;
  out.terminal_at = r.terminal_at;
}

void MemoryStore::schedule(std::uint32_t slot, bool created) {
  const Row& r = rows_[slot];
  switch (r.status) {
    case Status::pending:
      // A new request's times are its creation time and that plus the fixed deadline, both no
      // earlier than the last request's: lane a. A retry's due time is anywhere; its deadline is
      // the one it was created with, and requests deferred or retried soon after they arrived
      // (all of them, in an outage) come back in about the order they were created: lane c,
      // where they queue without sifting through a heap of millions.
      blocked_.remove(slot);
      due_.set(slot, r.id, r.due_at, created ? DueLane::a : DueLane::none);
      expiry_.set(slot, r.id, r.deadline_at, created ? DueLane::a : DueLane::c);
      return;
    case Status::blocked:
      due_.remove(slot);
      blocked_.set(slot, r.id, r.due_at, DueLane::none);
      expiry_.set(slot, r.id, r.deadline_at, DueLane::c);
      return;
    case Status::in_flight:
      blocked_.remove(slot);
      due_.set(slot, r.id, r.due_at, DueLane::b);  // now + the lease: no earlier than the last
      expiry_.remove(slot);
      return;
    case Status::delivered:
    case Status::failed:
    case Status::dead_lettered:
      due_.remove(slot);
      blocked_.remove(slot);
      expiry_.remove(slot);
      return;
  }
}

void MemoryStore::forget_finished(Time now) {
  // The rows forgotten next have been cold for the whole retention. Start loading them a few
  // creates ahead — the row first, then (once it is in cache) its key's table slot and its last
  // attempt — so the misses overlap with other work instead of stalling here.
  retention_.prefetch([this](const Retention::Finished& f) -> const Row& { return rows_[f.slot]; });
  if (const Retention::Finished* f = retention_.peek(4)) {
    const Row& soon = rows_[f->slot];
    keys_.prefetch(soon.key_hash);
    if (soon.last_attempt != kNone) __builtin_prefetch(&attempts_[soon.last_attempt]);
  }
  retention_.expire(now, [this](const Retention::Finished& f) {
    Row& r = rows_[f.slot];
    if (r.id != f.id || !is_terminal(r.status) || r.terminal_at != f.at) return;  // replayed since
    keys_.erase(r.key_hash, f.slot + 1);
    ids_.erase(f.id);
    for (std::uint32_t a = r.last_attempt; a != kNone;) {
      const std::uint32_t previous = attempts_[a].previous;
      if (!details_.empty()) details_.erase(a);
      attempts_.release(a);
      a = previous;
    }
    r.last_attempt = kNone;
    r.id = 0;
    r.text.clear();
    rows_.release(f.slot);
  });
}

std::uint32_t MemoryStore::intern_url(std::string_view url) {
  const std::uint64_t h = hash_bytes(url);
  const std::uint64_t found = url_index_.find(h, [&](std::uint64_t i) { return urls_[i - 1].view() == url; });
  if (found != 0) return static_cast<std::uint32_t>(found - 1);
  InlineText text;  // filled before the table may grow: `url` stays valid whatever it points into
  text.assign(url);
  urls_.push_back(std::move(text));
  url_index_.insert(h, urls_.size());
  return static_cast<std::uint32_t>(urls_.size() - 1);
}

CreateResult MemoryStore::create(const NewRequest& req) {
  forget_finished(req.created_at);
  const std::uint64_t h = key_hash(req.cxid, req.request_id);
  const std::uint64_t found = keys_.find(h, [&](std::uint64_t s) {
    const Row& r = rows_[s - 1];
    return (r.cxid() == req.cxid || planted(mutant::key_ignores_cxid)) && r.request_id() == req.request_id;
  });
  if (found != 0) {
    const Row& original = rows_[found - 1];
    return {original.payload() == req.payload ? CreateOutcome::duplicate : CreateOutcome::conflict, original.id};
  }
  if (req.cxid.size() > UINT16_MAX || req.request_id.size() > UINT16_MAX) {
    throw StoreError(StoreFailure::other, "cxid and request_id must each be shorter than 64 KiB");
  }
  const std::uint32_t slot = rows_.acquire();
  Row& r = rows_[slot];
  r = Row{};
  r.id = next_id_++;
  r.text.assign(req.cxid, req.request_id, req.payload);
  r.key_hash = h;
  r.cxid_len = static_cast<std::uint16_t>(req.cxid.size());
  r.request_len = static_cast<std::uint16_t>(req.request_id.size());
  r.created_at = req.created_at;
  r.deadline_at = req.deadline_at;
  r.status = Status::pending;
  r.due_at = req.created_at;
  r.not_before = req.created_at;
  ids_.insert(r.id, slot);
  keys_.insert(h, slot + 1);
  ++by_status_[static_cast<int>(Status::pending)];
  schedule(slot, true);
  return {CreateOutcome::created, r.id};
}

bool MemoryStore::claim_due(Time now, PodId pod, Duration lease, RequestRow& out, Claimable which) {
  const DueOrder::Entry* first = due_.front();
  while (planted(mutant::crash_loses_leased_work) && first != nullptr && first->at <= now &&
         rows_[first->slot].status == Status::in_flight) {
    due_.remove(first->slot);  // the abandoned claim is forgotten
    first = due_.front();
  }
  const std::optional<Next> next = next_claimable(which);
  if (!next || next->at > now) return false;
  claim(next->slot, now, pod, lease, out);
  return true;
}

std::optional<MemoryStore::Next> MemoryStore::next_claimable(Claimable which) const {
  const DueOrder::Entry* first = due_.front();
  if (const BlockedOrder::Entry* b = which == Claimable::all ? blocked_.front() : nullptr;
      b != nullptr && (first == nullptr || std::pair(b->at, b->id) < std::pair(first->at, first->id))) {
    return Next{b->at, b->slot};
  }
  if (first == nullptr) return std::nullopt;
  return Next{first->at, first->slot};
}

bool MemoryStore::claim_expired(Time now, PodId pod, Duration lease, RequestRow& out) {
  const ExpiryOrder::Entry* first = expiry_.front();
  if (first == nullptr || first->at >= now) return false;
  claim(first->slot, now, pod, lease, out);  // the claim takes it out of expiry_
  return true;
}

void MemoryStore::claim(std::uint32_t slot, Time now, PodId pod, Duration lease, RequestRow& out) {
  Row& r = rows_[slot];
  RELAYSIM_ASSERT(allows(kRequestLifecycle, r.status, Status::in_flight), "a claim is a move of kRequestLifecycle");
  --by_status_[static_cast<int>(r.status)];
  ++by_status_[static_cast<int>(Status::in_flight)];
  r.status = Status::in_flight;
  r.lease_owner = pod;
  r.claim_token = next_token_++;
  r.due_at = now + lease;
  schedule(slot);  // the lease expiry is when a rescue may claim it
  copy_out(r, out);
}

bool MemoryStore::complete(RequestId id, ClaimToken token, const Completion& c) {
  const std::uint32_t slot = ids_.find(id);
  if (slot == DenseIdMap::kNone) return false;
  Row& r = rows_[slot];
  if (r.status != Status::in_flight) return false;
  if (r.claim_token != token && !planted(mutant::completion_ignores_token)) return false;
  RELAYSIM_ASSERT(c.status != Status::in_flight && allows(kRequestLifecycle, Status::in_flight, c.status),
                  "a completion leaves in_flight by a move of kRequestLifecycle");
  if (c.attempt != nullptr) {
    RELAYSIM_ASSERT(c.attempt->request == id &&
                        (c.attempt->number == r.attempts + 1 || planted(mutant::completion_ignores_token)),
                    "attempts are appended in order");
    RELAYSIM_ASSERT(c.attempt->claim_token == token, "an attempt is recorded under the claim that made it");
    const AttemptRow& a = *c.attempt;
    const std::uint32_t slot_a = attempts_.acquire();
    StoredAttempt& stored = attempts_[slot_a];
    stored.started_at = a.started_at;
    stored.finished_at = a.finished_at;
    stored.claim_token = a.claim_token;
    stored.serviceb_version = a.serviceb_version;
    stored.number = a.number;
    stored.pod = a.pod;
    stored.url = intern_url(a.resolved_url);
    stored.previous = r.last_attempt;
    stored.http_status = a.http_status;
    stored.error = a.error;
    if (!a.detail.empty()) details_[slot_a] = a.detail;
    r.last_attempt = slot_a;
    ++attempt_count_;
    ++r.attempts;
  }
  if (c.status == Status::blocked) ++r.deferrals;
  --by_status_[static_cast<int>(r.status)];
  ++by_status_[static_cast<int>(c.status)];
  r.status = c.status;
  r.reason = c.reason;
  r.due_at = c.due_at;
  r.not_before = c.not_before;
  r.last_delay = c.last_delay;
  r.lease_owner = 0;
  if (is_terminal(c.status)) {
    r.terminal_at = c.at;
    retention_.finished(c.at, id, slot);
  }
  if (c.notify) {
    RELAYSIM_ASSERT(c.status == Status::failed || c.status == Status::dead_lettered, "only a failure is noticed");
    outbox_.push_back(OutboxNotice{Notice{next_notice_id_++, id, r.replays, 0, c.status, c.reason, c.at}, c.at});
  }
  schedule(slot);
  return true;
}

bool MemoryStore::claim_notice(Time now, Duration lease, Notice& out) {
  for (OutboxNotice& n : outbox_) {
    if (n.due > now) continue;
    ++n.notice.sends;
    n.due = now + lease;
    out = n.notice;
    return true;
  }
  return false;
}

void MemoryStore::notice_sent(NoticeId id) {
  const auto it = std::lower_bound(outbox_.begin(), outbox_.end(), id,
                                   [](const OutboxNotice& n, NoticeId v) { return n.notice.id < v; });
  if (it != outbox_.end() && it->notice.id == id) outbox_.erase(it);
}

std::optional<Time> MemoryStore::next_notice() {
  std::optional<Time> next;
  for (const OutboxNotice& n : outbox_) {
    if (!next || n.due < *next) next = n.due;
  }
  return next;
}

std::vector<Notice> MemoryStore::notices() {
  std::vector<Notice> out;
  out.reserve(outbox_.size());
  for (const OutboxNotice& n : outbox_) out.push_back(n.notice);
  return out;
}

std::optional<Time> MemoryStore::next_due(Claimable which) {
  const std::optional<Next> next = next_claimable(which);
  if (!next) return std::nullopt;
  return next->at;
}

std::optional<Time> MemoryStore::next_expiry() {
  const ExpiryOrder::Entry* first = expiry_.front();
  if (first == nullptr) return std::nullopt;
  return first->at;
}

ReplayOutcome MemoryStore::replay(RequestId id, Time now, Time new_deadline) {
  // Like a create, a replay forgets what is due to be forgotten first: a request past its
  // retention is gone, whichever call comes first.
  forget_finished(now);
  const std::uint32_t slot = ids_.find(id);
  if (slot == DenseIdMap::kNone) return ReplayOutcome::not_found;
  Row& r = rows_[slot];
  if (!is_terminal(r.status) && !planted(mutant::replay_of_open_request)) return ReplayOutcome::not_terminal;
  --by_status_[static_cast<int>(r.status)];
  ++by_status_[static_cast<int>(Status::pending)];
  r.status = Status::pending;
  r.reason = Reason::none;
  if (!planted(mutant::replay_keeps_deadline)) r.deadline_at = new_deadline;
  r.due_at = now;
  r.not_before = now;
  r.last_delay = Duration::zero();
  r.deferrals = 0;
  r.terminal_at = Time{};
  ++r.replays;
  schedule(slot);
  return ReplayOutcome::replayed;
}

std::optional<RequestRow> MemoryStore::get(RequestId id) {
  const Row* r = row(id);
  if (r == nullptr) return std::nullopt;
  RequestRow out;
  copy_out(*r, out);
  return out;
}

std::vector<AttemptRow> MemoryStore::attempts(RequestId id) {
  std::vector<AttemptRow> out;
  const Row* r = row(id);
  if (r == nullptr) return out;
  for (std::uint32_t s = r->last_attempt; s != kNone; s = attempts_[s].previous) {
    const StoredAttempt& a = attempts_[s];
    AttemptRow& o = out.emplace_back();
    o.request = id;
    o.number = a.number;
    o.pod = a.pod;
    o.claim_token = a.claim_token;
    o.started_at = a.started_at;
    o.finished_at = a.finished_at;
    o.resolved_url = urls_[a.url].view();
    o.serviceb_version = a.serviceb_version;
    o.error = a.error;
    o.http_status = a.http_status;
    if (!details_.empty()) {
      if (const auto it = details_.find(s); it != details_.end()) o.detail = it->second;
    }
  }
  std::reverse(out.begin(), out.end());  // the list runs newest first
  return out;
}

StoreCounts MemoryStore::counts() {
  StoreCounts c;
  c.by_status = by_status_;
  c.attempts = attempt_count_;
  return c;
}

std::vector<RequestId> MemoryStore::with_status(Status status, RequestId after, std::size_t limit) {
  std::vector<RequestId> out;
  for (RequestId id = after + 1; id < next_id_ && out.size() < limit; ++id) {
    const Row* r = row(id);
    if (r != nullptr && r->status == status) out.push_back(id);
  }
  return out;
}

}  // namespace relaysim::webhook
