#include "model/outbox/memory_store.h"

#include "model/core/assert.h"
#include "model/core/mutants.h"
#include "model/outbox/mutants.h"

namespace relaysim::outbox {

void MemoryStore::begin(Time now) {
  RELAYSIM_ASSERT(!open_, "one business operation at a time");
  open_ = true;
  now_ = now;
  staged_.clear();
  undo_.clear();
}

std::uint64_t MemoryStore::write_entity(EntityKey key) {
  RELAYSIM_ASSERT(open_, "an entity is written inside a business operation");
  auto [it, inserted] = entities_.try_emplace(key, 0);
  undo_.emplace_back(key, it->second);
  return ++it->second;
}

RowId MemoryStore::add(const NewMessage& n) {
  RELAYSIM_ASSERT(open_, "a message is added inside a business operation");
  RELAYSIM_ASSERT(n.version >= 1, "a message carries its entity's version, as write_entity returned it");
  Message m;
  m.id = next_id_ + staged_.size();
  m.type = n.type;
  m.key = n.key;
  m.bucket = n.bucket;
  m.version = n.version;
  m.created_at = now_;
  m.next_attempt = now_;
  staged_.push_back(m);
  return m.id;
}

void MemoryStore::commit() {
  RELAYSIM_ASSERT(open_, "commit needs an open business operation");
  for (const Message& m : staged_) {
    RELAYSIM_ASSERT(m.id == next_id_, "ids are handed out in order");
    Row& r = rows_.emplace_back();
    r = Row{};
    r.m = m;
    ++next_id_;
    ++counts_.messages;
    ++counts_.by_status[static_cast<std::size_t>(Status::pending)];
    KeyList& k = keys_[m.key];
    if (k.first == 0) {
      k.first = k.last = m.id;
    } else {
      rows_[k.last - 1].next_of_key = m.id;
      k.last = m.id;
    }
    pending_.set(static_cast<std::uint32_t>(m.id - 1), m.id, m.next_attempt, DueLane::a);
  }
  staged_.clear();
  undo_.clear();
  open_ = false;
}

void MemoryStore::rollback() {
  if (!open_) return;
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
    if (it->second == 0) {
      entities_.erase(it->first);
    } else {
      entities_[it->first] = it->second;
    }
  }
  staged_.clear();
  undo_.clear();
  open_ = false;
}

bool MemoryStore::fenced(FenceToken token) {
  if (token < fence_ && !planted(mutant::write_without_fence)) return false;
  fence_ = std::max(fence_, token);
  return true;
}

bool MemoryStore::fence(FenceToken token) { return fenced(token); }

void MemoryStore::return_scanned() {
  for (RowId id : scanned_) {
    Row& r = rows_[id - 1];
    if (!r.scanned) continue;
    r.scanned = false;
    if (r.m.status == Status::pending) pending_.set(static_cast<std::uint32_t>(id - 1), id, r.m.next_attempt, DueLane::none);
  }
  scanned_.clear();
}

bool MemoryStore::first_of_key(const Row& r) const {
  const auto it = keys_.find(r.m.key);
  return it != keys_.end() && it->second.first == r.m.id;
}

bool MemoryStore::scan(const Scan& s, std::vector<Message>& out) {
  RELAYSIM_ASSERT(!open_, "no scan inside a business operation");
  RELAYSIM_ASSERT(!s.mark || s.processing_timeout > Duration::zero(), "a processing timeout is longer than zero");
  out.clear();
  if (!fenced(s.token)) return false;
  return_scanned();
  while (out.size() < s.limit) {
    const auto* front = pending_.front();
    if (front == nullptr || front->at > s.due_by) break;
    const std::uint32_t slot = front->slot;
    Row& r = rows_[slot];
    pending_.remove(slot);
    if (s.ordering == Ordering::per_key && !first_of_key(r)) {
      r.parked = true;  // back when its key's first message is final
      continue;
    }
    if (s.mark) {
      to_processing(r, s.token, s.now, s.processing_timeout);
    } else {
      r.scanned = true;
      scanned_.push_back(r.m.id);
    }
    out.push_back(r.m);
  }
  return true;
}

void MemoryStore::set_status(Row& r, Status s) {
  RELAYSIM_ASSERT(allows(kMessageLifecycle, r.m.status, s), "a message moves by kMessageLifecycle");
  --counts_.by_status[static_cast<std::size_t>(r.m.status)];
  ++counts_.by_status[static_cast<std::size_t>(s)];
  r.m.status = s;
}

void MemoryStore::to_processing(Row& r, FenceToken token, Time now, Duration processing_timeout) {
  set_status(r, Status::processing);
  ++r.m.attempt;
  r.m.next_attempt = now + processing_timeout;
  r.m.fence = token;
  r.scanned = false;
  // A parked message marked by mark() leaves the pending state; were it still flagged, its key's
  // head finishing would put it, processing, back in the pending queue.
  r.parked = false;
  pending_.remove(static_cast<std::uint32_t>(r.m.id - 1));
  processing_.set(static_cast<std::uint32_t>(r.m.id - 1), r.m.id, r.m.next_attempt, DueLane::a);
}

std::optional<std::uint32_t> MemoryStore::mark(FenceToken token, Time now, Duration processing_timeout,
                                               std::span<const Message> messages, std::vector<Message>& out) {
  RELAYSIM_ASSERT(!open_, "no mark inside a business operation");
  RELAYSIM_ASSERT(processing_timeout > Duration::zero(), "a processing timeout is longer than zero");
  out.clear();
  if (!fenced(token)) return std::nullopt;
  std::uint32_t changed = 0;
  for (const Message& m : messages) {
    Row* r = row(m.id);
    if (r == nullptr || r->m.status != Status::pending || r->m.attempt != m.attempt) continue;
    to_processing(*r, token, now, processing_timeout);
    out.push_back(r->m);
    ++changed;
  }
  return_scanned();
  return changed;
}

void MemoryStore::finished(Row& r) {
  RELAYSIM_ASSERT(is_final(r.m.status), "only a final message hands its key's turn on");
  processing_.remove(static_cast<std::uint32_t>(r.m.id - 1));
  pending_.remove(static_cast<std::uint32_t>(r.m.id - 1));
  const auto it = keys_.find(r.m.key);
  if (it == keys_.end() || it->second.first != r.m.id) return;  // a later message of its key: it stays listed
  // The key's first unfinished message is the next one that is not final.
  RowId next = r.next_of_key;
  while (next != 0 && is_final(rows_[next - 1].m.status)) next = rows_[next - 1].next_of_key;
  if (next == 0) {
    keys_.erase(it);
    return;
  }
  it->second.first = next;
  Row& n = rows_[next - 1];
  if (n.parked) {
    n.parked = false;
    pending_.set(static_cast<std::uint32_t>(next - 1), next, n.m.next_attempt, DueLane::none);
  }
}

std::optional<std::uint32_t> MemoryStore::rescue(FenceToken token, Time now, Time overdue_by, std::uint32_t limit,
                                                 std::span<const std::uint16_t> max_attempts, std::vector<Message>& out) {
  RELAYSIM_ASSERT(!open_, "no rescue inside a business operation");
  out.clear();
  if (!fenced(token)) return std::nullopt;
  while (out.size() < limit) {
    const auto* front = processing_.front();
    if (front == nullptr || front->at > overdue_by) break;
    const std::uint32_t slot = front->slot;  // `front` is the queue's: removing changes it
    Row& r = rows_[slot];
    processing_.remove(slot);
    const bool spent = r.m.type < max_attempts.size() && r.m.attempt >= max_attempts[r.m.type];
    if (spent) {
      set_status(r, Status::failed);
      r.m.reason = Reason::exhausted;
      finished(r);
    } else {
      set_status(r, Status::pending);
      r.m.next_attempt = now;
      pending_.set(slot, r.m.id, now, DueLane::b);
    }
    out.push_back(r.m);
  }
  return static_cast<std::uint32_t>(out.size());
}

Relock MemoryStore::relock(RowId id, std::uint16_t attempt, Message& out) {
  Row* r = row(id);
  if (r == nullptr) return Relock::gone;
  out = r->m;
  return relock_of(r->m, attempt);
}

bool MemoryStore::finish(RowId id, std::uint16_t attempt, const Finish& f) {
  RELAYSIM_ASSERT(f.status != Status::processing, "a consumer finishes a message out of processing");
  Row* r = row(id);
  if (r == nullptr || r->m.status != Status::processing || r->m.attempt != attempt) return false;
  set_status(*r, f.status);
  r->m.reason = f.reason;
  if (f.status == Status::pending) {
    processing_.remove(static_cast<std::uint32_t>(id - 1));
    r->m.next_attempt = f.next_attempt;
    pending_.set(static_cast<std::uint32_t>(id - 1), id, f.next_attempt, DueLane::none);
  } else {
    finished(*r);
  }
  return true;
}

std::optional<Message> MemoryStore::get(RowId id) {
  Row* r = row(id);
  if (r == nullptr) return std::nullopt;
  return r->m;
}

std::optional<std::uint64_t> MemoryStore::entity_version(EntityKey key) {
  const auto it = entities_.find(key);
  if (it == entities_.end()) return std::nullopt;
  return it->second;
}

std::optional<Time> MemoryStore::next_due(Ordering ordering) {
  // Under per_key a pending message behind an unfinished one of its key may not go: park it, as a
  // scan would, so the answer is never a time at which a scan finds nothing to do.
  if (ordering == Ordering::per_key) {
    while (const auto* f = pending_.front()) {
      const std::uint32_t slot = f->slot;
      Row& r = rows_[slot];
      if (first_of_key(r)) break;
      pending_.remove(slot);
      r.parked = true;
    }
  }
  std::optional<Time> at;
  if (const auto* f = pending_.front()) at = f->at;
  if (const auto* f = processing_.front()) at = at ? std::min(*at, f->at) : f->at;
  // Messages the last scan returned are due again if nobody marks them.
  for (RowId id : scanned_) {
    const Row& r = rows_[id - 1];
    if (r.scanned && r.m.status == Status::pending) at = at ? std::min(*at, r.m.next_attempt) : r.m.next_attempt;
  }
  return at;
}

}  // namespace relaysim::outbox
