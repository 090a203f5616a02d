// Store: the durable state of one database shard of the outbox relay — the business rows
// (`entity`), the outbox (`outbox_request`), and the shard's fence (the largest leader token
// that ever wrote to it). Every pod holds a handle on every shard.
//
// Promises (tests/outbox/store_contract_test.cpp holds both implementations to them):
//  - A business operation is one transaction: begin(), any number of write_entity() and add(),
//    then commit() — everything written becomes visible at once — or rollback(), after which
//    nothing of it was ever there. Nothing else may be called while one is open.
//  - Ids are handed out in increasing order from 1 (an id of a rolled-back operation may be
//    handed out again: only committed messages exist).
//  - Every leader write is fenced: fence(t), scan(), mark() and rescue() apply only when their
//    token is at least the shard's fence, and raise it to their token; a stale token changes and
//    returns nothing. So once a leader with token t has written, no leader with a smaller token
//    ever writes again, however long it was paused.
//  - scan() returns due pending messages — next_attempt <= due_by — in (next_attempt, id) order,
//    at most `limit`; under Ordering::per_key only a message with no unfinished message of its key
//    before it (a key's messages go one at a time, in id order: a failing head holds its key). With
//    `mark`, they are marked processing in the same transaction.
//  - mark() (and scan's mark) moves a message from pending at the attempt it was read with to
//    processing: attempt + 1, next_attempt = now + the processing timeout, fence = the token.
//  - relock() is the consumer's re-lock: `locked` only while the message is processing under the
//    record's attempt; `not_yet` while it is still pending one attempt before (its leader has
//    published and not yet marked it); `gone` otherwise. finish() applies only while the message
//    is processing under `attempt` (its consumer's fencing), and moves it to handled, failed, or
//    pending at a later next_attempt.
//  - rescue() moves processing messages whose next_attempt has passed back to pending at `now`
//    (failed as exhausted when their attempts are spent): no non-final message is ever stuck.
//  - A final message never changes again.
// Every method is synchronous. A failed call (busy, disk full, I/O) throws StoreError and
// changes nothing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/core/names.h"
#include "model/core/time.h"
#include "model/outbox/types.h"
#include "model/store/store_error.h"

namespace relaysim::outbox {

struct NewMessage {
  std::uint32_t type = 0;
  EntityKey key = 0;
  std::uint32_t bucket = 0;
  std::uint64_t version = 0;  // the entity's version, as write_entity returned it
};

// A leader's scan.
struct Scan {
  FenceToken token = 0;
  Time now{};
  Time due_by{};                     // messages whose next_attempt <= due_by (now, unless a bug says otherwise)
  std::uint32_t limit = 1;
  Ordering ordering = Ordering::none;
  bool mark = false;                 // mark_then_publish: mark them processing in the same transaction
  Duration processing_timeout{};     // with mark
};

enum class Relock : std::uint8_t { locked, not_yet, gone };
inline constexpr auto kRelockNames = names<Relock>({
    {Relock::locked, "locked"}, {Relock::not_yet, "not_yet"}, {Relock::gone, "gone"}});
constexpr std::string_view to_string(Relock r) { return kRelockNames[r]; }

// The re-lock's one judgement, for every store: what message `m`, as the store holds it now, says
// to a consumer whose record carries `attempt`.
constexpr Relock relock_of(const Message& m, std::uint16_t attempt) {
  if (m.status == Status::processing && m.attempt == attempt) return Relock::locked;
  if (m.status == Status::pending && m.attempt + 1 == attempt) return Relock::not_yet;
  return Relock::gone;
}

// How a consumer finishes a message it handled.
struct Finish {
  Status status = Status::handled;  // handled, failed, or pending (retry)
  Reason reason = Reason::none;
  Time next_attempt{};              // pending: when it may be published again
  Time at{};
};

struct StoreCounts {
  std::array<std::uint64_t, kStatusCount> by_status{};
  std::uint64_t messages = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // A business operation (see above).
  virtual void begin(Time now) = 0;
  // Writes the entity's row (its version one higher, or 1 when new) and returns the new version.
  virtual std::uint64_t write_entity(EntityKey key) = 0;
  virtual RowId add(const NewMessage& m) = 0;
  virtual void commit() = 0;
  virtual void rollback() = 0;  // never throws; nothing happens without an open operation

  // The leader's writes, each fenced (false / nullopt: the token is stale; nothing changed).
  // mark(): `out` gets the messages it marked, as they are now.
  virtual bool fence(FenceToken token) = 0;
  virtual bool scan(const Scan& scan, std::vector<Message>& out) = 0;
  virtual std::optional<std::uint32_t> mark(FenceToken token, Time now, Duration processing_timeout,
                                            std::span<const Message> messages, std::vector<Message>& out) = 0;
  // Processing messages whose next_attempt <= overdue_by (now, unless a bug says otherwise) go
  // back to pending at `now`; `max_attempts[type]`: a rescued message with that many attempts
  // fails as exhausted instead (a type past the span's end has no limit). `out`: the rescued
  // messages as they are now.
  virtual std::optional<std::uint32_t> rescue(FenceToken token, Time now, Time overdue_by, std::uint32_t limit,
                                              std::span<const std::uint16_t> max_attempts,
                                              std::vector<Message>& out) = 0;

  // The consumer's.
  virtual Relock relock(RowId id, std::uint16_t attempt, Message& out) = 0;
  virtual bool finish(RowId id, std::uint16_t attempt, const Finish& finish) = 0;

  // Reads.
  virtual std::optional<Message> get(RowId id) = 0;
  virtual std::optional<std::uint64_t> entity_version(EntityKey key) = 0;
  virtual FenceToken current_fence() = 0;
  virtual StoreCounts counts() = 0;
  // The earliest next_attempt of any pending message (per_key: of any that may go now), or of
  // any processing one: when a leader has work again.
  virtual std::optional<Time> next_due(Ordering ordering) = 0;
};

// Opens and closes a business operation: rolls it back unless it was committed.
class Operation {
 public:
  Operation(Store& store, Time now) : store_(store) { store_.begin(now); }
  ~Operation() {
    if (!done_) store_.rollback();
  }
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;
  void commit() {
    store_.commit();
    done_ = true;
  }
  void rollback() {
    store_.rollback();
    done_ = true;
  }
  Store* operator->() { return &store_; }

 private:
  Store& store_;
  bool done_ = false;
};

}  // namespace relaysim::outbox
