#include "sim/outbox/pod_store.h"

#include <string>

#include "model/core/assert.h"

namespace relaysim::sim::outbox {

using namespace relaysim::outbox;

void PodStore::check(bool writes) const {
  if (shard_faults_.empty()) return;
  const Time now = kernel_.now();
  for (const StoreFault& f : shard_faults_) {
    if (!f.window.contains(now) || (f.failure == StoreFailure::full && !writes)) continue;
    throw StoreError(f.failure, "shard fault: the shard's database is " + std::string(to_string(f.failure)));
  }
}

void PodStore::begin(Time now) {
  run(0, [&] { store_.begin(now); });
}

std::uint64_t PodStore::write_entity(EntityKey key) {
  return run(1, [&] { return store_.write_entity(key); });
}

RowId PodStore::add(const NewMessage& m) {
  RELAYSIM_ASSERT(m.version >= 1, "a message carries its entity's version, as write_entity returned it");
  return run(1, [&] { return store_.add(m); });
}

// A commit writes nothing new on its own: a crash in the middle strikes the operation's writes.
void PodStore::commit() {
  run(0, [&] { store_.commit(); });
}

bool PodStore::fence(FenceToken token) {
  return run(1, [&] { return store_.fence(token); });
}

bool PodStore::scan(const Scan& s, std::vector<Message>& out) {
  RELAYSIM_ASSERT(!s.mark || s.processing_timeout > Duration::zero(), "a processing timeout is longer than zero");
  return run(1, [&] { return store_.scan(s, out); });
}

std::optional<std::uint32_t> PodStore::mark(FenceToken token, Time now, Duration processing_timeout,
                                            std::span<const Message> messages, std::vector<Message>& out) {
  RELAYSIM_ASSERT(processing_timeout > Duration::zero(), "a processing timeout is longer than zero");
  return run(1, [&] { return store_.mark(token, now, processing_timeout, messages, out); });
}

std::optional<std::uint32_t> PodStore::rescue(FenceToken token, Time now, Time overdue_by, std::uint32_t limit,
                                              std::span<const std::uint16_t> max_attempts, std::vector<Message>& out) {
  return run(1, [&] { return store_.rescue(token, now, overdue_by, limit, max_attempts, out); });
}

Relock PodStore::relock(RowId id, std::uint16_t attempt, Message& out) {
  return run(0, [&] { return store_.relock(id, attempt, out); });
}

bool PodStore::finish(RowId id, std::uint16_t attempt, const Finish& f) {
  RELAYSIM_ASSERT(f.status != relaysim::outbox::Status::processing, "a consumer finishes a message out of processing");
  return run(1, [&] { return store_.finish(id, attempt, f); });
}

}  // namespace relaysim::sim::outbox
