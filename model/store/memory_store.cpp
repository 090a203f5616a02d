#include "model/store/memory_store.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/core/mutants.h"

namespace relaysim::webhook {

std::string_view to_string(CreateOutcome o) {
  switch (o) {
    case CreateOutcome::created: return "created";
    case CreateOutcome::duplicate: return "duplicate";
    case CreateOutcome::conflict: return "conflict";
  }
  return "?";
}

namespace {
// Heap order: the earliest due first, then the lowest id (the contract's tie rule).
struct Later {
  template <class E>
  bool operator()(const E& a, const E& b) const {
    return a.due != b.due ? a.due > b.due : a.id > b.id;
  }
};
}  // namespace

RequestRow* MemoryStore::row(RequestId id) {
  if (id == 0 || id > rows_.size()) return nullptr;
  return &rows_[id - 1];
}

void MemoryStore::schedule(RequestRow& r) {
  const std::uint32_t epoch = ++epochs_[r.id - 1];
  if (is_terminal(r.status)) return;
  due_.push_back({r.due_at, r.id, epoch});
  std::push_heap(due_.begin(), due_.end(), Later{});
  if (r.status != Status::in_flight && in_expiry_[r.id - 1] == 0) {
    in_expiry_[r.id - 1] = 1;
    expiry_.push_back({r.deadline_at, r.id, 0});
    std::push_heap(expiry_.begin(), expiry_.end(), Later{});
  }
}

void MemoryStore::drop_stale() {
  while (!due_.empty() && due_.front().epoch != epochs_[due_.front().id - 1]) {
    std::pop_heap(due_.begin(), due_.end(), Later{});
    due_.pop_back();
  }
}

CreateResult MemoryStore::create(const NewRequest& req) {
  key_scratch_.assign(req.cxid);
  key_scratch_.push_back('\x1f');
  key_scratch_.append(req.request_id);
  auto [it, inserted] = keys_.try_emplace(key_scratch_, rows_.size() + 1);
  if (!inserted) {
    const RequestRow& original = rows_[it->second - 1];
    return {original.payload == req.payload ? CreateOutcome::duplicate : CreateOutcome::conflict, it->second};
  }
  RequestRow& r = rows_.emplace_back();
  epochs_.push_back(0);
  in_expiry_.push_back(0);
  r.id = rows_.size();
  r.cxid.assign(req.cxid);
  r.request_id.assign(req.request_id);
  r.payload.assign(req.payload);
  r.created_at = req.created_at;
  r.deadline_at = req.deadline_at;
  r.status = Status::pending;
  r.due_at = req.created_at;
  r.not_before = req.created_at;
  ++by_status_[static_cast<int>(Status::pending)];
  schedule(r);
  return {CreateOutcome::created, r.id};
}

bool MemoryStore::claim_due(Time now, PodId pod, Duration lease, RequestRow& out) {
  drop_stale();
  while (planted(Mutant::crash_loses_leased_work) && !due_.empty() && due_.front().due <= now &&
         rows_[due_.front().id - 1].status == Status::in_flight) {
    std::pop_heap(due_.begin(), due_.end(), Later{});  // the abandoned claim is forgotten
    due_.pop_back();
    drop_stale();
  }
  if (due_.empty() || due_.front().due > now) return false;
  claim(rows_[due_.front().id - 1], now, pod, lease, out);
  return true;
}

bool MemoryStore::claim_expired(Time now, PodId pod, Duration lease, RequestRow& out) {
  while (!expiry_.empty()) {
    const DueEntry top = expiry_.front();
    RequestRow& r = rows_[top.id - 1];
    const bool replayed_since = top.due != r.deadline_at;  // a newer entry stands for this row
    const bool waiting = r.status == Status::pending || r.status == Status::blocked;
    if (!replayed_since && waiting && top.due >= now) return false;
    std::pop_heap(expiry_.begin(), expiry_.end(), Later{});
    expiry_.pop_back();
    if (replayed_since) continue;
    // In flight or terminal: drop the entry; schedule() adds one again if the row waits again.
    in_expiry_[top.id - 1] = 0;
    if (!waiting) continue;
    claim(r, now, pod, lease, out);
    return true;
  }
  return false;
}

void MemoryStore::claim(RequestRow& r, Time now, PodId pod, Duration lease, RequestRow& out) {
  RELAYSIM_ASSERT(!is_terminal(r.status), "claiming a terminal request");
  --by_status_[static_cast<int>(r.status)];
  ++by_status_[static_cast<int>(Status::in_flight)];
  r.status = Status::in_flight;
  r.lease_owner = pod;
  r.claim_token = next_token_++;
  r.due_at = now + lease;
  schedule(r);  // the lease expiry is when a rescue may claim it
  out = r;
}

bool MemoryStore::complete(RequestId id, ClaimToken token, const Completion& c) {
  RequestRow* r = row(id);
  if (r == nullptr || r->status != Status::in_flight) return false;
  if (r->claim_token != token && !planted(Mutant::completion_ignores_token)) return false;
  RELAYSIM_ASSERT(c.status != Status::in_flight, "a completion must leave in_flight");
  if (c.attempt != nullptr) {
    RELAYSIM_ASSERT(c.attempt->request == id &&
                        (c.attempt->number == r->attempts + 1 || planted(Mutant::completion_ignores_token)),
                    "attempts are appended in order");
    attempts_.push_back(*c.attempt);
    ++r->attempts;
  }
  if (c.status == Status::blocked) ++r->deferrals;
  --by_status_[static_cast<int>(r->status)];
  ++by_status_[static_cast<int>(c.status)];
  r->status = c.status;
  r->reason = c.reason;
  r->due_at = c.due_at;
  r->not_before = c.not_before;
  r->last_delay = c.last_delay;
  r->lease_owner = 0;
  if (is_terminal(c.status)) r->terminal_at = c.at;
  schedule(*r);
  return true;
}

std::optional<Time> MemoryStore::next_due() {
  drop_stale();
  if (due_.empty()) return std::nullopt;
  return due_.front().due;
}

ReplayOutcome MemoryStore::replay(RequestId id, Time now, Time new_deadline) {
  RequestRow* r = row(id);
  if (r == nullptr) return ReplayOutcome::not_found;
  if (!is_terminal(r->status)) return ReplayOutcome::not_terminal;
  --by_status_[static_cast<int>(r->status)];
  ++by_status_[static_cast<int>(Status::pending)];
  r->status = Status::pending;
  r->reason = Reason::none;
  r->deadline_at = new_deadline;
  r->due_at = now;
  r->not_before = now;
  r->last_delay = Duration::zero();
  r->deferrals = 0;
  r->terminal_at = Time{};
  ++r->replays;
  in_expiry_[id - 1] = 0;  // the old entry carries the old deadline and is dropped when it surfaces
  schedule(*r);
  return ReplayOutcome::replayed;
}

std::optional<RequestRow> MemoryStore::get(RequestId id) {
  const RequestRow* r = row(id);
  if (r == nullptr) return std::nullopt;
  return *r;
}

std::vector<AttemptRow> MemoryStore::attempts(RequestId id) {
  std::vector<AttemptRow> out;
  for (const AttemptRow& a : attempts_) {
    if (a.request == id) out.push_back(a);
  }
  return out;
}

StoreCounts MemoryStore::counts() {
  StoreCounts c;
  c.by_status = by_status_;
  c.attempts = attempts_.size();
  return c;
}

}  // namespace relaysim::webhook
