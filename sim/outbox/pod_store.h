// PodStore: one pod's handle on one shard of the outbox, through which the scenario's store faults
// (every shard) and its shard faults (this shard) reach the real store code (see
// sim/world/store_guard.h for what the faults do). Every write is counted as one statement, so a
// crash in the middle of a write fails its first statement and always lands inside the
// transaction — a business operation's rows and messages roll back together.
#pragma once

#include <vector>

#include "model/outbox/store.h"
#include "sim/world/store_guard.h"

namespace relaysim::sim::outbox {

class PodStore final : public GuardedStore<relaysim::outbox::Store> {
 public:
  // `shard_faults`: this shard's own failing windows.
  PodStore(relaysim::outbox::Store& store, Db* db, StoreFaults& faults, Kernel& kernel, Processes& processes,
           std::uint32_t pod, std::vector<StoreFault> shard_faults)
      : GuardedStore(store, db, faults, kernel, processes, pod), kernel_(kernel), shard_faults_(std::move(shard_faults)) {}

  using Message = relaysim::outbox::Message;
  void begin(Time now) override;
  std::uint64_t write_entity(relaysim::outbox::EntityKey key) override;
  relaysim::outbox::RowId add(const relaysim::outbox::NewMessage& m) override;
  void commit() override;
  void rollback() override { store_.rollback(); }

  bool fence(relaysim::outbox::FenceToken token) override;
  bool scan(const relaysim::outbox::Scan& scan, std::vector<Message>& out) override;
  std::optional<std::uint32_t> mark(relaysim::outbox::FenceToken token, Time now, Duration processing_timeout,
                                    std::span<const Message> messages, std::vector<Message>& out) override;
  std::optional<std::uint32_t> rescue(relaysim::outbox::FenceToken token, Time now, Time overdue_by, std::uint32_t limit,
                                      std::span<const std::uint16_t> max_attempts, std::vector<Message>& out) override;
  relaysim::outbox::Relock relock(relaysim::outbox::RowId id, std::uint16_t attempt, Message& out) override;
  bool finish(relaysim::outbox::RowId id, std::uint16_t attempt, const relaysim::outbox::Finish& finish) override;

  std::optional<Message> get(relaysim::outbox::RowId id) override { return store_.get(id); }
  std::optional<std::uint64_t> entity_version(relaysim::outbox::EntityKey key) override { return store_.entity_version(key); }
  relaysim::outbox::FenceToken current_fence() override { return store_.current_fence(); }
  relaysim::outbox::StoreCounts counts() override { return store_.counts(); }
  std::optional<Time> next_due(relaysim::outbox::Ordering ordering) override { return store_.next_due(ordering); }

 private:
  // Throws while this shard's own fault holds.
  void check(bool writes) const;
  template <class Call>
  decltype(auto) run(int writes, Call&& call) {
    check(writes > 0);
    return guard_.run(writes, std::forward<Call>(call));
  }

  Kernel& kernel_;
  std::vector<StoreFault> shard_faults_;
};

}  // namespace relaysim::sim::outbox
