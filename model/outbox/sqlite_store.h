// SqliteStore: the outbox Store (model/outbox/store.h) on SQLite — the real one, and the one a
// differential test holds MemoryStore to.
//
// Schema: `entity` (key, version), the business rows; `outbox_request`, one row per message, with
// two partial indexes on (next_attempt, id) — pending rows, which scan() and next_due() walk, and
// processing rows, which rescue() walks — and a partial index on (key, id) over unfinished rows,
// so "has this message an unfinished one of its key before it?" is one index probe however many
// finished messages its key has; `shard`, one row holding the shard's fence.
//
// A business operation holds a real transaction from begin() to commit() or rollback(). Every
// other call that writes more than one statement runs in a transaction of its own (a savepoint
// when the connection batches), so a call that throws changes nothing.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "model/outbox/store.h"
#include "model/store/sqlite_db.h"

namespace relaysim::outbox {

class SqliteStore final : public Store {
 public:
  // `path` may be ":memory:". Creates the schema when absent. Throws StoreError.
  SqliteStore(const std::string& path, Durability durability);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

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
  FenceToken current_fence() override;
  StoreCounts counts() override;
  std::optional<Time> next_due(Ordering ordering) override;

  Db& db() { return db_; }

 private:
  using Statement = Db::Statement;
  enum class Fenced : std::uint8_t { stale, held, raised };
  // Inside the caller's transaction: checks `token` against the shard's fence and raises it.
  Fenced fenced(FenceToken token);
  // A leader's write: one transaction that checks (and raises) the shard's fence first; nullopt,
  // with nothing done, when the token is stale. `body` fills `out` and says whether it wrote
  // anything; `out` is left empty if the write fails.
  template <class Body>
  std::optional<std::uint32_t> fenced_write(FenceToken token, std::vector<Message>& out, Body&& body);
  // Moves `m`, read as pending, to processing, in the database and in `m`.
  void to_processing(Message& m, FenceToken token, Time now, Duration processing_timeout);
  static void read_row(const Statement& s, Message& out);

  Db db_;
  // The open business operation. Declared after db_, so a store dropped with one open rolls it
  // back before the connection closes.
  std::optional<Db::Transaction> op_;
  Time now_{};
  // An answer remembered under the write mark it was read at (see Db::sole_writer_mark).
  struct Seen {
    Db::WriteMark mark;
    Ordering ordering = Ordering::none;
    std::optional<Time> value;
  };
  Seen next_due_seen_;
  std::unique_ptr<Statement> read_fence_, raise_fence_, entity_get_, entity_put_, insert_, scan_any_, scan_per_key_,
      to_processing_, get_, rescue_pick_, rescue_pending_, rescue_failed_, finish_, counts_, next_due_any_,
      next_due_per_key_;
};

}  // namespace relaysim::outbox
