#include "model/outbox/sqlite_store.h"

#include <algorithm>
#include <string>

#include "model/core/assert.h"
#include "model/core/mutants.h"
#include "model/outbox/mutants.h"

namespace relaysim::outbox {

namespace {

static_assert(static_cast<int>(Status::pending) == 0 && static_cast<int>(Status::processing) == 1 &&
                  static_cast<int>(Status::handled) == 2 && static_cast<int>(Status::failed) == 3,
              "the schema's partial indexes and the queries spell the statuses as numbers");

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS shard (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  fence INTEGER NOT NULL
);
INSERT OR IGNORE INTO shard (id, fence) VALUES (1, 0);
CREATE TABLE IF NOT EXISTS entity (
  key     INTEGER PRIMARY KEY,
  version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox_request (
  id           INTEGER PRIMARY KEY,
  type         INTEGER NOT NULL,
  key          INTEGER NOT NULL,
  bucket       INTEGER NOT NULL,
  version      INTEGER NOT NULL,
  status       INTEGER NOT NULL,
  reason       INTEGER NOT NULL,
  attempt      INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  next_attempt INTEGER NOT NULL,
  fence        INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_request_pending ON outbox_request (next_attempt, id) WHERE status = 0;
CREATE INDEX IF NOT EXISTS outbox_request_processing ON outbox_request (next_attempt, id) WHERE status = 1;
CREATE INDEX IF NOT EXISTS outbox_request_key ON outbox_request (key, id) WHERE status < 2;
)sql";

constexpr const char* kColumns =
    "id, type, key, bucket, version, status, reason, attempt, created_at, next_attempt, fence";

// Whether the row `o` is its key's first unfinished message. The condition says `status < 2` word
// for word as the key index does, which is what lets SQLite answer it from that index with one
// probe; keys with a long history of finished messages would otherwise cost a walk over all of
// them for every candidate.
constexpr const char* kFirstOfKey =
    "NOT EXISTS (SELECT 1 FROM outbox_request AS b WHERE b.key = o.key AND b.status < 2 AND b.id < o.id)";

std::string make_select_due(bool per_key) {
  return std::string("SELECT ") + kColumns + " FROM outbox_request AS o WHERE o.status = 0 AND o.next_attempt <= ?1" +
         (per_key ? std::string(" AND ") + kFirstOfKey : std::string()) + " ORDER BY o.next_attempt, o.id LIMIT ?2";
}

std::string make_select_next_due(bool per_key) {
  // Two scalar subqueries, each the first entry of one partial index: a single MIN over
  // `status < 2` could use neither.
  const std::string pending =
      per_key ? std::string("SELECT o.next_attempt FROM outbox_request AS o WHERE o.status = 0 AND ") + kFirstOfKey +
                    " ORDER BY o.next_attempt, o.id LIMIT 1"
              : std::string("SELECT MIN(next_attempt) FROM outbox_request WHERE status = 0");
  return "SELECT (" + pending + "), (SELECT MIN(next_attempt) FROM outbox_request WHERE status = 1)";
}

// The statements built from pieces, built once: a scan should not pay for a string.
const char* select_due(bool per_key) {
  static const std::string any = make_select_due(false), by_key = make_select_due(true);
  return (per_key ? by_key : any).c_str();
}
const char* select_next_due(bool per_key) {
  static const std::string any = make_select_next_due(false), by_key = make_select_next_due(true);
  return (per_key ? by_key : any).c_str();
}
const char* select_by_id() {
  static const std::string sql = std::string("SELECT ") + kColumns + " FROM outbox_request WHERE id = ?1";
  return sql.c_str();
}
const char* select_overdue() {
  static const std::string sql = std::string("SELECT ") + kColumns +
                                 " FROM outbox_request WHERE status = 1 AND next_attempt <= ?1"
                                 " ORDER BY next_attempt, id LIMIT ?2";
  return sql.c_str();
}

}  // namespace

SqliteStore::SqliteStore(const std::string& path, Durability durability) : db_(path, durability) {
  db_.exec(kSchema);
}

SqliteStore::~SqliteStore() = default;

void SqliteStore::read_row(const Statement& s, Message& out) {
  out.id = static_cast<RowId>(s.i64(0));
  out.type = static_cast<std::uint32_t>(s.i64(1));
  out.key = static_cast<EntityKey>(s.i64(2));
  out.bucket = static_cast<std::uint32_t>(s.i64(3));
  out.version = static_cast<std::uint64_t>(s.i64(4));
  out.status = static_cast<Status>(s.i64(5));
  out.reason = static_cast<Reason>(s.i64(6));
  out.attempt = static_cast<std::uint16_t>(s.i64(7));
  out.created_at = s.time(8);
  out.next_attempt = s.time(9);
  out.fence = static_cast<FenceToken>(s.i64(10));
}

// ---- the business operation -------------------------------------------------------------------

void SqliteStore::begin(Time now) {
  RELAYSIM_ASSERT(!op_, "one business operation at a time");
  op_.emplace(db_);
  now_ = now;
}

std::uint64_t SqliteStore::write_entity(EntityKey key) {
  RELAYSIM_ASSERT(op_, "an entity is written inside a business operation");
  // Read, then write the new version outright: the write is the call's only write statement, so
  // a call that fails leaves the entity as it was, with the operation still open.
  std::uint64_t version = 1;
  {
    Statement& q = db_.prepared(entity_get_, "SELECT version FROM entity WHERE key = ?1");
    ResetOnExit guard(q);
    q.bind(1, key);
    if (q.step()) version = static_cast<std::uint64_t>(q.i64(0)) + 1;
  }
  Statement& q = db_.prepared(entity_put_,
                              "INSERT INTO entity (key, version) VALUES (?1, ?2)"
                              " ON CONFLICT (key) DO UPDATE SET version = excluded.version");
  q.bind(1, key).bind(2, version);
  q.run();
  return version;
}

RowId SqliteStore::add(const NewMessage& n) {
  RELAYSIM_ASSERT(op_, "a message is added inside a business operation");
  RELAYSIM_ASSERT(n.version >= 1, "a message carries its entity's version, as write_entity returned it");
  // The id is the rowid SQLite picks — one more than the largest — so ids start at 1 and a
  // rolled-back operation's ids are handed out again, as the contract allows.
  Statement& q = db_.prepared(insert_,
                              "INSERT INTO outbox_request (type, key, bucket, version, status, reason, attempt, created_at,"
                              " next_attempt, fence) VALUES (?1, ?2, ?3, ?4, 0, 0, 0, ?5, ?5, 0)");
  q.bind(1, n.type).bind(2, n.key).bind(3, n.bucket).bind(4, n.version).bind(5, now_);
  q.run();
  return static_cast<RowId>(db_.last_insert_rowid());
}

void SqliteStore::commit() {
  RELAYSIM_ASSERT(op_, "commit needs an open business operation");
  try {
    op_->commit();
  } catch (...) {
    // A commit that fails leaves nothing of the operation, like a rollback.
    op_.reset();
    throw;
  }
  op_.reset();
  db_.wrote();
}

void SqliteStore::rollback() { op_.reset(); }

// ---- the leader's writes ----------------------------------------------------------------------

SqliteStore::Fenced SqliteStore::fenced(FenceToken token) {
  RELAYSIM_ASSERT(db_.in_transaction(), "the fence is checked in the write's own transaction");
  const FenceToken fence = current_fence();
  if (token < fence && !planted(mutant::write_without_fence)) return Fenced::stale;
  if (token <= fence) return Fenced::held;  // nothing to write: a leader's usual case
  Statement& q = db_.prepared(raise_fence_, "UPDATE shard SET fence = ?1 WHERE id = 1");
  q.bind(1, token);
  q.run();
  return Fenced::raised;
}

bool SqliteStore::fence(FenceToken token) {
  RELAYSIM_ASSERT(!op_, "no fence inside a business operation");
  Db::Transaction tx(db_);
  const Fenced f = fenced(token);
  if (f == Fenced::stale) return false;
  tx.commit();
  if (f == Fenced::raised) db_.wrote();
  return true;
}

void SqliteStore::to_processing(Message& m, FenceToken token, Time now, Duration processing_timeout) {
  Statement& q = db_.prepared(to_processing_,
                              "UPDATE outbox_request SET status = 1, attempt = attempt + 1, next_attempt = ?2, fence = ?3"
                              " WHERE id = ?1");
  q.bind(1, m.id).bind(2, now + processing_timeout).bind(3, token);
  q.run();
  m.status = Status::processing;
  ++m.attempt;
  m.next_attempt = now + processing_timeout;
  m.fence = token;
}

template <class Body>
std::optional<std::uint32_t> SqliteStore::fenced_write(FenceToken token, std::vector<Message>& out, Body&& body) {
  out.clear();
  try {
    Db::Transaction tx(db_);
    const Fenced f = fenced(token);
    if (f == Fenced::stale) return std::nullopt;
    const bool wrote = body();
    tx.commit();
    if (f == Fenced::raised || wrote) db_.wrote();
    return static_cast<std::uint32_t>(out.size());
  } catch (...) {
    out.clear();
    throw;
  }
}

bool SqliteStore::scan(const Scan& s, std::vector<Message>& out) {
  RELAYSIM_ASSERT(!op_, "no scan inside a business operation");
  RELAYSIM_ASSERT(!s.mark || s.processing_timeout > Duration::zero(), "a processing timeout is longer than zero");
  return fenced_write(s.token, out, [&] {
    const bool per_key = s.ordering == Ordering::per_key;
    Statement& q = per_key ? db_.prepared(scan_per_key_, select_due(true))
                           : db_.prepared(scan_any_, select_due(false));
    {
      ResetOnExit guard(q);
      q.bind(1, s.due_by).bind(2, static_cast<std::int64_t>(s.limit));
      while (q.step()) read_row(q, out.emplace_back());
    }
    // Marking a message does not finish it, so it changes no other candidate's turn in its key:
    // the rows read above are exactly the ones to mark.
    if (s.mark) {
      for (Message& m : out) to_processing(m, s.token, s.now, s.processing_timeout);
    }
    return s.mark && !out.empty();
  }).has_value();
}

std::optional<std::uint32_t> SqliteStore::mark(FenceToken token, Time now, Duration processing_timeout,
                                               std::span<const Message> messages, std::vector<Message>& out) {
  RELAYSIM_ASSERT(!op_, "no mark inside a business operation");
  RELAYSIM_ASSERT(processing_timeout > Duration::zero(), "a processing timeout is longer than zero");
  return fenced_write(token, out, [&] {
    // Each row is read before it is written, so `out` holds the rows as they are now without an
    // UPDATE ... RETURNING; only a row still pending at the attempt it was read with is marked.
    Statement& read = db_.prepared(get_, select_by_id());
    for (const Message& m : messages) {
      Message row;
      {
        ResetOnExit guard(read);
        read.bind(1, m.id);
        if (!read.step()) continue;
        read_row(read, row);
      }
      if (row.status != Status::pending || row.attempt != m.attempt) continue;
      to_processing(row, token, now, processing_timeout);
      out.push_back(row);
    }
    return !out.empty();
  });
}

std::optional<std::uint32_t> SqliteStore::rescue(FenceToken token, Time now, Time overdue_by, std::uint32_t limit,
                                                 std::span<const std::uint16_t> max_attempts, std::vector<Message>& out) {
  RELAYSIM_ASSERT(!op_, "no rescue inside a business operation");
  return fenced_write(token, out, [&] {
    {
      Statement& q = db_.prepared(rescue_pick_, select_overdue());
      ResetOnExit guard(q);
      q.bind(1, overdue_by).bind(2, static_cast<std::int64_t>(limit));
      while (q.step()) read_row(q, out.emplace_back());
    }
    for (Message& m : out) {
      const bool spent = m.type < max_attempts.size() && m.attempt >= max_attempts[m.type];
      if (spent) {
        Statement& q = db_.prepared(rescue_failed_, "UPDATE outbox_request SET status = 3, reason = ?2 WHERE id = ?1");
        q.bind(1, m.id).bind(2, static_cast<int>(Reason::exhausted));
        q.run();
        m.status = Status::failed;
        m.reason = Reason::exhausted;
      } else {
        Statement& q =
            db_.prepared(rescue_pending_, "UPDATE outbox_request SET status = 0, next_attempt = ?2 WHERE id = ?1");
        q.bind(1, m.id).bind(2, now);
        q.run();
        m.status = Status::pending;
        m.next_attempt = now;
      }
    }
    return !out.empty();
  });
}

// ---- the consumer's ---------------------------------------------------------------------------

Relock SqliteStore::relock(RowId id, std::uint16_t attempt, Message& out) {
  const std::optional<Message> m = get(id);
  if (!m) return Relock::gone;
  out = *m;
  return relock_of(*m, attempt);
}

bool SqliteStore::finish(RowId id, std::uint16_t attempt, const Finish& f) {
  RELAYSIM_ASSERT(f.status != Status::processing, "a consumer finishes a message out of processing");
  RELAYSIM_ASSERT(!op_, "no finish inside a business operation");
  // One statement, atomic by itself. A final message keeps its next_attempt, as it had it.
  Statement& q = db_.prepared(finish_,
                              "UPDATE outbox_request SET status = ?3, reason = ?4,"
                              " next_attempt = CASE WHEN ?3 = 0 THEN ?5 ELSE next_attempt END"
                              " WHERE id = ?1 AND status = 1 AND attempt = ?2");
  q.bind(1, id).bind(2, static_cast<int>(attempt)).bind(3, static_cast<int>(f.status)).bind(4, static_cast<int>(f.reason))
      .bind(5, f.next_attempt);
  q.run();
  if (db_.changes() == 0) return false;  // not processing under this attempt: another consumer's, or final
  db_.wrote();
  return true;
}

// ---- reads ------------------------------------------------------------------------------------

std::optional<Message> SqliteStore::get(RowId id) {
  Statement& q = db_.prepared(get_, select_by_id());
  ResetOnExit guard(q);
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  Message m;
  read_row(q, m);
  return m;
}

std::optional<std::uint64_t> SqliteStore::entity_version(EntityKey key) {
  Statement& q = db_.prepared(entity_get_, "SELECT version FROM entity WHERE key = ?1");
  ResetOnExit guard(q);
  q.bind(1, key);
  if (!q.step()) return std::nullopt;
  return static_cast<std::uint64_t>(q.i64(0));
}

FenceToken SqliteStore::current_fence() {
  Statement& q = db_.prepared(read_fence_, "SELECT fence FROM shard WHERE id = 1");
  ResetOnExit guard(q);
  RELAYSIM_ASSERT(q.step(), "the shard table has its row");
  return static_cast<FenceToken>(q.i64(0));
}

StoreCounts SqliteStore::counts() {
  StoreCounts c;
  Statement& q = db_.prepared(counts_, "SELECT status, COUNT(*) FROM outbox_request GROUP BY status");
  ResetOnExit guard(q);
  while (q.step()) {
    const std::int64_t s = q.i64(0);
    const auto n = static_cast<std::uint64_t>(q.i64(1));
    if (s >= 0 && s < kStatusCount) c.by_status[static_cast<std::size_t>(s)] = n;
    c.messages += n;
  }
  return c;
}

std::optional<Time> SqliteStore::next_due(Ordering ordering) {
  // While this connection is the only writer, an answer stands until it writes.
  const std::optional<Db::WriteMark> mark = db_.sole_writer_mark();
  if (mark && next_due_seen_.mark == *mark && next_due_seen_.ordering == ordering) return next_due_seen_.value;
  const bool per_key = ordering == Ordering::per_key;
  Statement& q = per_key ? db_.prepared(next_due_per_key_, select_next_due(true))
                         : db_.prepared(next_due_any_, select_next_due(false));
  std::optional<Time> next;
  {
    ResetOnExit guard(q);
    RELAYSIM_ASSERT(q.step(), "two scalar subqueries make one row");
    for (int col = 0; col < 2; ++col) {
      if (q.is_null(col)) continue;
      const Time at = q.time(col);
      next = next ? std::min(*next, at) : at;
    }
  }
  if (mark) next_due_seen_ = {*mark, ordering, next};
  return next;
}

}  // namespace relaysim::outbox
