// MemoryStore: the outbox Store (model/outbox/store.h) in memory, for long simulations. One per
// shard. A business operation stages its writes and applies them at commit (or undoes the entity
// versions at rollback), so nothing of an open or rolled-back operation is ever visible.
//
// Layout: messages by id - 1 in chunks that never move; two DueQueues (model/store/due_queue.h)
// — pending messages by next_attempt, processing messages by next_attempt (their processing
// timeout, for the rescuer) — and, per entity key, a list of its unfinished messages in id order,
// so a per-key scan finds a key's first one without a search. A scan that meets a message that is
// not its key's first parks it outside the queue; it goes back when its key's first one is final.
//
// publish_then_mark reads without marking, and the rows stay pending; the queue cannot be walked
// without taking its front, so a scan takes the rows it returns out of the pending queue and
// keeps their ids: the next mark() or scan() puts back every one still pending. Nothing but the
// store sees the difference: a second scan returns them again.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/core/slot_pool.h"
#include "model/outbox/store.h"
#include "model/store/due_queue.h"

namespace relaysim::outbox {

class MemoryStore final : public Store {
 public:
  MemoryStore() = default;

  void begin(Time now) override;
  std::uint64_t write_entity(EntityKey key) override;
  RowId add(const NewMessage& m) override;
  void commit() override;
  void rollback() override;

  bool fence(FenceToken token) override;
  bool scan(const Scan& scan, std::vector<Message>& out) override;
  std::optional<std::uint32_t> mark(FenceToken token, Time now, Duration processing_timeout,
                                    std::span<const Message> messages, std::vector<Message>& out) override;
  std::optional<std::uint32_t> rescue(FenceToken token, Time now, Time overdue_by, std::uint32_t limit,
                                      std::span<const std::uint16_t> max_attempts, std::vector<Message>& out) override;

  Relock relock(RowId id, std::uint16_t attempt, Message& out) override;
  bool finish(RowId id, std::uint16_t attempt, const Finish& finish) override;

  std::optional<Message> get(RowId id) override;
  std::optional<std::uint64_t> entity_version(EntityKey key) override;
  FenceToken current_fence() override { return fence_; }
  StoreCounts counts() override { return counts_; }
  std::optional<Time> next_due(Ordering ordering) override;

 private:
  static constexpr std::uint32_t kNone = UINT32_MAX;
  struct Row {
    Message m;
    std::uint32_t pending_place = kNone;     // its place in pending_
    std::uint32_t processing_place = kNone;  // its place in processing_
    RowId next_of_key = 0;                   // the next unfinished message of its key (0: none)
    bool parked = false;                     // pending, out of pending_: not its key's first
    bool scanned = false;                    // pending, out of pending_: returned by the last scan
  };
  struct KeyList {
    RowId first = 0;  // the key's first unfinished message
    RowId last = 0;
  };
  struct PendingPlace {
    MemoryStore* store;
    std::uint32_t& operator()(std::uint32_t slot) const { return store->rows_[slot].pending_place; }
  };
  struct ProcessingPlace {
    MemoryStore* store;
    std::uint32_t& operator()(std::uint32_t slot) const { return store->rows_[slot].processing_place; }
  };

  Row* row(RowId id) { return id >= 1 && id < next_id_ ? &rows_[id - 1] : nullptr; }
  bool fenced(FenceToken token);
  // Puts back in the pending queue every message the last scan returned that is still pending.
  void return_scanned();
  void set_status(Row& r, Status s);
  void to_processing(Row& r, FenceToken token, Time now, Duration processing_timeout);
  // A message became final: its key's next one may go.
  void finished(Row& r);
  bool first_of_key(const Row& r) const;

  StableVector<Row, 12> rows_;
  DueQueue<PendingPlace> pending_{PendingPlace{this}};
  DueQueue<ProcessingPlace> processing_{ProcessingPlace{this}};
  std::unordered_map<EntityKey, KeyList> keys_;
  std::unordered_map<EntityKey, std::uint64_t> entities_;
  std::vector<RowId> scanned_;
  StoreCounts counts_;
  FenceToken fence_ = 0;
  RowId next_id_ = 1;
  // The open business operation.
  bool open_ = false;
  Time now_{};
  std::vector<Message> staged_;
  std::vector<std::pair<EntityKey, std::uint64_t>> undo_;  // entity versions before it (0: new)
};

}  // namespace relaysim::outbox
