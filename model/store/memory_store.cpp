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

std::uint64_t MemoryStore::key_hash(std::string_view cxid, std::string_view request_id) {
  return mix64(hash_name(cxid) * 31 + hash_name(request_id));
}

MemoryStore::Row* MemoryStore::row(RequestId id) {
  const std::uint64_t s = ids_.find(id);
  return s == 0 ? nullptr : &rows_[s - 1];
}

void MemoryStore::copy_out(const Row& r, RequestRow& out) {
  const std::string_view text = r.text;
  out.id = r.id;
  out.cxid.assign(text.substr(0, r.cxid_len));
  out.request_id.assign(text.substr(r.cxid_len, r.request_len));
  out.payload.assign(text.substr(r.cxid_len + r.request_len));
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

void MemoryStore::schedule(std::uint32_t slot) {
  Row& r = rows_[slot];
  const std::uint32_t epoch = ++r.epoch;
  if (is_terminal(r.status)) return;
  due_.push_back({r.due_at, r.id, slot, epoch});
  std::push_heap(due_.begin(), due_.end(), Later{});
  if (r.status != Status::in_flight && !r.in_expiry) {
    r.in_expiry = true;
    expiry_.push_back({r.deadline_at, r.id, slot, 0});
    std::push_heap(expiry_.begin(), expiry_.end(), Later{});
  }
}

void MemoryStore::drop_stale() {
  while (!due_.empty() && due_.front().epoch != rows_[due_.front().slot].epoch) {
    std::pop_heap(due_.begin(), due_.end(), Later{});
    due_.pop_back();
  }
}

void MemoryStore::forget_finished(Time now) {
  if (!retention_) return;
  while (!finished_.empty() && finished_.front().at + *retention_ <= now) {
    const Finished f = finished_.front();
    finished_.pop_front();
    Row& r = rows_[f.slot];
    if (r.id != f.id || !is_terminal(r.status) || r.terminal_at != f.at) continue;  // replayed since
    keys_.erase(r.key_hash, f.slot + 1);
    ids_.erase(f.id, f.slot + 1);
    r.id = 0;
    r.text = std::string();
    r.history = std::vector<AttemptRow>();
    free_.push_back(f.slot);
  }
}

CreateResult MemoryStore::create(const NewRequest& req) {
  forget_finished(req.created_at);
  const std::uint64_t h = key_hash(req.cxid, req.request_id);
  const std::uint64_t found = keys_.find(h, [&](std::uint64_t s) {
    const Row& r = rows_[s - 1];
    const std::string_view text = r.text;
    return text.substr(0, r.cxid_len) == req.cxid && text.substr(r.cxid_len, r.request_len) == req.request_id;
  });
  if (found != 0) {
    const Row& original = rows_[found - 1];
    const std::string_view payload = std::string_view(original.text).substr(original.cxid_len + original.request_len);
    return {payload == req.payload ? CreateOutcome::duplicate : CreateOutcome::conflict, original.id};
  }
  std::uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(rows_.size());
    rows_.emplace_back();
  }
  Row& r = rows_[slot];
  const std::uint32_t epoch = r.epoch;
  r = Row{};
  r.epoch = epoch;
  r.id = next_id_++;
  r.text.reserve(req.cxid.size() + req.request_id.size() + req.payload.size());
  r.text.append(req.cxid).append(req.request_id).append(req.payload);
  r.cxid_len = static_cast<std::uint32_t>(req.cxid.size());
  r.request_len = static_cast<std::uint32_t>(req.request_id.size());
  r.key_hash = h;
  r.created_at = req.created_at;
  r.deadline_at = req.deadline_at;
  r.status = Status::pending;
  r.due_at = req.created_at;
  r.not_before = req.created_at;
  ids_.insert(r.id, slot + 1);
  keys_.insert(h, slot + 1);
  ++by_status_[static_cast<int>(Status::pending)];
  schedule(slot);
  return {CreateOutcome::created, r.id};
}

bool MemoryStore::claim_due(Time now, PodId pod, Duration lease, RequestRow& out) {
  drop_stale();
  while (planted(Mutant::crash_loses_leased_work) && !due_.empty() && due_.front().due <= now &&
         rows_[due_.front().slot].status == Status::in_flight) {
    std::pop_heap(due_.begin(), due_.end(), Later{});  // the abandoned claim is forgotten
    due_.pop_back();
    drop_stale();
  }
  if (due_.empty() || due_.front().due > now) return false;
  claim(due_.front().slot, now, pod, lease, out);
  return true;
}

bool MemoryStore::claim_expired(Time now, PodId pod, Duration lease, RequestRow& out) {
  while (!expiry_.empty()) {
    const HeapEntry top = expiry_.front();
    Row& r = rows_[top.slot];
    // The slot may hold a later request now, or the row may have a newer entry since a replay.
    const bool stale = r.id != top.id || top.due != r.deadline_at;
    const bool waiting = r.status == Status::pending || r.status == Status::blocked;
    if (!stale && waiting && top.due >= now) return false;
    std::pop_heap(expiry_.begin(), expiry_.end(), Later{});
    expiry_.pop_back();
    if (stale) continue;
    // In flight or terminal: drop the entry; schedule() adds one again if the row waits again.
    r.in_expiry = false;
    if (!waiting) continue;
    claim(top.slot, now, pod, lease, out);
    return true;
  }
  return false;
}

void MemoryStore::claim(std::uint32_t slot, Time now, PodId pod, Duration lease, RequestRow& out) {
  Row& r = rows_[slot];
  RELAYSIM_ASSERT(!is_terminal(r.status), "claiming a terminal request");
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
  const std::uint64_t s = ids_.find(id);
  if (s == 0) return false;
  Row& r = rows_[s - 1];
  if (r.status != Status::in_flight) return false;
  if (r.claim_token != token && !planted(Mutant::completion_ignores_token)) return false;
  RELAYSIM_ASSERT(c.status != Status::in_flight, "a completion must leave in_flight");
  if (c.attempt != nullptr) {
    RELAYSIM_ASSERT(c.attempt->request == id &&
                        (c.attempt->number == r.attempts + 1 || planted(Mutant::completion_ignores_token)),
                    "attempts are appended in order");
    r.history.push_back(*c.attempt);
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
    if (retention_) finished_.push_back({c.at, id, static_cast<std::uint32_t>(s - 1)});
  }
  schedule(static_cast<std::uint32_t>(s - 1));
  return true;
}

std::optional<Time> MemoryStore::next_due() {
  drop_stale();
  if (due_.empty()) return std::nullopt;
  return due_.front().due;
}

ReplayOutcome MemoryStore::replay(RequestId id, Time now, Time new_deadline) {
  const std::uint64_t s = ids_.find(id);
  if (s == 0) return ReplayOutcome::not_found;
  Row& r = rows_[s - 1];
  if (!is_terminal(r.status)) return ReplayOutcome::not_terminal;
  --by_status_[static_cast<int>(r.status)];
  ++by_status_[static_cast<int>(Status::pending)];
  r.status = Status::pending;
  r.reason = Reason::none;
  r.deadline_at = new_deadline;
  r.due_at = now;
  r.not_before = now;
  r.last_delay = Duration::zero();
  r.deferrals = 0;
  r.terminal_at = Time{};
  ++r.replays;
  r.in_expiry = false;  // the old entry carries the old deadline and is dropped when it surfaces
  schedule(static_cast<std::uint32_t>(s - 1));
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
  const Row* r = row(id);
  return r == nullptr ? std::vector<AttemptRow>{} : r->history;
}

StoreCounts MemoryStore::counts() {
  StoreCounts c;
  c.by_status = by_status_;
  c.attempts = attempt_count_;
  return c;
}

}  // namespace relaysim::webhook
