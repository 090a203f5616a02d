// PgStore: the outbox Store (model/outbox/store.h) on PostgreSQL, through libpq — the store the
// relay runs on in production, held to the same contract tests as the memory and SQLite stores
// (tests/outbox/store_contract_test.cpp).
//
// Schema: as the SQLite store's — `entity` (key, version), `outbox_request` one row per message
// with partial indexes on (next_attempt, id) for pending and for processing rows and on (key, id)
// for unfinished ones, and `shard`, one row holding the shard's fence — with BIGINT times (Unix
// nanoseconds, as the model's Time) and a BIGSERIAL id. Created when absent, under an advisory
// lock, so that several processes may start on one database at once.
//
// What PostgreSQL brings that SQLite lacks, and how each call uses it:
//  - A business operation is a transaction on this connection from begin() to commit(); several
//    processes write theirs at once (ids then commit out of id order, which the relay tolerates:
//    a scan reads what is committed).
//  - A leader's write locks the shard's row first (SELECT ... FOR UPDATE), so the fence check and
//    the writes it guards are one serialized step: a stale leader's statements wait for the new
//    leader's to commit, then find the fence raised and change nothing.
//  - A scan claims rows with SELECT ... FOR UPDATE SKIP LOCKED: two leaders of one shard that both
//    believe themselves leader never mark the same row.
// Ids: a rolled-back operation's ids are not handed out again (a sequence moves on); the contract
// allows either.
//
// Every failure is a StoreError (busy: a lock or serialization conflict, or the server not
// accepting connections yet; full: disk full; io: the connection lost; other: anything else); a
// call that fails changes nothing, and a connection that broke is made again by the next call.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/outbox/store.h"

struct pg_conn;
struct pg_result;

namespace relaysim::live::outbox {

namespace model = relaysim::outbox;

class PgStore final : public model::Store {
 public:
  // `conninfo`: a libpq connection string ("host=/tmp/pg port=5433 dbname=outbox"). Connects and
  // creates the schema when absent. Throws StoreError.
  explicit PgStore(std::string conninfo);
  ~PgStore() override;
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  void begin(Time now) override;
  std::uint64_t write_entity(model::EntityKey key) override;
  model::RowId add(const model::NewMessage& m) override;
  void commit() override;
  void rollback() override;

  bool fence(model::FenceToken token) override;
  bool scan(const model::Scan& scan, std::vector<model::Message>& out) override;
  std::optional<std::uint32_t> mark(model::FenceToken token, Time now, Duration processing_timeout,
                                    std::span<const model::Message> messages, std::vector<model::Message>& out) override;
  std::optional<std::uint32_t> rescue(model::FenceToken token, Time now, Time overdue_by, std::uint32_t limit,
                                      std::span<const std::uint16_t> max_attempts,
                                      std::vector<model::Message>& out) override;

  model::Relock relock(model::RowId id, std::uint16_t attempt, model::Message& out) override;
  bool finish(model::RowId id, std::uint16_t attempt, const model::Finish& finish) override;

  std::optional<model::Message> get(model::RowId id) override;
  std::optional<std::uint64_t> entity_version(model::EntityKey key) override;
  model::FenceToken current_fence() override;
  model::StoreCounts counts() override;
  // Every message of the shard, in id order (for `relaysim judge`, after a run).
  std::vector<model::Message> rows();
  std::optional<Time> next_due(model::Ordering ordering) override;

 private:
  struct ResultFree {
    void operator()(pg_result* r) const;
  };
  using Result = std::unique_ptr<pg_result, ResultFree>;
  struct ConnFree {
    void operator()(pg_conn* c) const;
  };

  // The connection, made again when the last one broke (outside a business operation).
  pg_conn* conn();
  // Runs `sql` with text parameters; throws StoreError (rolling back a transaction it leaves
  // aborted is the caller's). Returns the result of a command or a query.
  Result run(const char* sql, std::initializer_list<std::string> params = {});
  // One transaction of a call's own: BEGIN, `body`, COMMIT; ROLLBACK on any exception.
  template <class Body>
  auto in_transaction(Body&& body) -> decltype(body());
  // Inside a transaction: locks the shard's row, and raises its fence to `token` unless stale.
  bool fenced(model::FenceToken token);
  template <class Body>
  std::optional<std::uint32_t> fenced_write(model::FenceToken token, std::vector<model::Message>& out, Body&& body);
  void to_processing(model::Message& m, model::FenceToken token, Time now, Duration processing_timeout);
  static void read_row(const pg_result* r, int row, model::Message& out);
  [[noreturn]] void fail(const pg_result* r, const char* what);

  std::string conninfo_;
  std::unique_ptr<pg_conn, ConnFree> conn_;
  bool op_ = false;  // a business operation is open
  Time now_{};
};

}  // namespace relaysim::live::outbox
