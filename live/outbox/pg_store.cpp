#include "live/outbox/pg_store.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "model/core/assert.h"

namespace relaysim::live::outbox {

using namespace relaysim::outbox;

namespace {

static_assert(static_cast<int>(Status::pending) == 0 && static_cast<int>(Status::processing) == 1 &&
                  static_cast<int>(Status::handled) == 2 && static_cast<int>(Status::failed) == 3,
              "the schema's partial indexes and the queries spell the statuses as numbers");

// Taken around the schema's creation: CREATE ... IF NOT EXISTS from two connections at once can
// still collide in PostgreSQL's catalogue.
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(7277304163)";

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS shard (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  fence BIGINT NOT NULL
);
INSERT INTO shard (id, fence) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
CREATE TABLE IF NOT EXISTS entity (
  key     BIGINT PRIMARY KEY,
  version BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox_request (
  id           BIGSERIAL PRIMARY KEY,
  type         INTEGER NOT NULL,
  key          BIGINT NOT NULL,
  bucket       INTEGER NOT NULL,
  version      BIGINT NOT NULL,
  status       SMALLINT NOT NULL,
  reason       SMALLINT NOT NULL,
  attempt      INTEGER NOT NULL,
  created_at   BIGINT NOT NULL,
  next_attempt BIGINT NOT NULL,
  fence        BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_request_pending ON outbox_request (next_attempt, id) WHERE status = 0;
CREATE INDEX IF NOT EXISTS outbox_request_processing ON outbox_request (next_attempt, id) WHERE status = 1;
CREATE INDEX IF NOT EXISTS outbox_request_key ON outbox_request (key, id) WHERE status < 2;
)sql";

#define RELAYSIM_OUTBOX_COLUMNS "id, type, key, bucket, version, status, reason, attempt, created_at, next_attempt, fence"

// Whether the row `o` is its key's first unfinished message (as the SQLite store asks it).
#define RELAYSIM_FIRST_OF_KEY \
  "NOT EXISTS (SELECT 1 FROM outbox_request AS b WHERE b.key = o.key AND b.status < 2 AND b.id < o.id)"

constexpr const char* kSelectById = "SELECT " RELAYSIM_OUTBOX_COLUMNS " FROM outbox_request WHERE id = $1";

// A text parameter: PostgreSQL infers each one's type from where the statement uses it. Keys and
// ids are unsigned 64-bit in the model and BIGINT here, as SQLite keeps them.
std::string num(std::uint64_t v) { return std::to_string(static_cast<std::int64_t>(v)); }
std::string num(std::int64_t v) { return std::to_string(v); }
std::string num(Time t) { return std::to_string(to_ns(t)); }

std::int64_t value(const pg_result* r, int row, int col) {
  return std::strtoll(PQgetvalue(r, row, col), nullptr, 10);
}

}  // namespace

void PgStore::ResultFree::operator()(pg_result* r) const { PQclear(r); }
void PgStore::ConnFree::operator()(pg_conn* c) const { PQfinish(c); }

PgStore::PgStore(std::string conninfo) : conninfo_(std::move(conninfo)) {
  in_transaction([&] {
    run(kSchemaLock);
    // Several statements in one: PQexec, which takes no parameters.
    const Result r(PQexec(conn(), kSchema));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) fail(r.get(), "cannot create the schema");
    return true;
  });
}

PgStore::~PgStore() = default;

pg_conn* PgStore::conn() {
  if (conn_ && PQstatus(conn_.get()) == CONNECTION_OK) return conn_.get();
  if (op_) {
    op_ = false;
    throw StoreError(StoreFailure::io, "PostgreSQL: the connection broke during a business operation: nothing of it was committed");
  }
  conn_.reset(PQconnectdb(conninfo_.c_str()));
  if (!conn_ || PQstatus(conn_.get()) != CONNECTION_OK) {
    std::string why = conn_ ? PQerrorMessage(conn_.get()) : "out of memory";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    conn_.reset();
    // Refused or not up yet: another try may find it; the caller's backoff decides.
    throw StoreError(StoreFailure::busy, "PostgreSQL: cannot connect: " + why);
  }
  // The server's notices ("relation already exists, skipping" when the schema is there) are not
  // the operator's business: libpq would print each on standard error.
  PQsetNoticeProcessor(conn_.get(), [](void*, const char*) {}, nullptr);
  return conn_.get();
}

void PgStore::fail(const pg_result* r, const char* what) {
  const char* state = r != nullptr ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string why = r != nullptr ? PQresultErrorMessage(r) : "";
  if (why.empty() && conn_) why = PQerrorMessage(conn_.get());
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  StoreFailure failure = StoreFailure::other;
  const std::string_view s = state != nullptr ? state : "";
  // The connection or the server went away, or the server ended the session (an administrator, a
  // shutdown, or its idle_in_transaction_session_timeout or idle_session_timeout).
  if (state == nullptr || (conn_ && PQstatus(conn_.get()) != CONNECTION_OK) || s.starts_with("08") || s == "57P01" ||
      s == "57P02" || s == "25P03" || s == "57P05") {
    failure = StoreFailure::io;
    conn_.reset();
    op_ = false;
  } else if (s == "53100") {
    failure = StoreFailure::full;
  } else if (s == "40001" || s == "40P01" || s == "55P03" || s == "57P03") {
    failure = StoreFailure::busy;  // a serialization failure, a deadlock, a lock not available, starting up
  }
  throw StoreError(failure, std::string("PostgreSQL: ") + what + ": " + why);
}

PgStore::Result PgStore::run(const char* sql, std::initializer_list<std::string> params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const std::string& p : params) values.push_back(p.c_str());
  Result r(PQexecParams(conn(), sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0));
  const ExecStatusType status = PQresultStatus(r.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(r.get(), sql);
  return r;
}

template <class Body>
auto PgStore::in_transaction(Body&& body) -> decltype(body()) {
  RELAYSIM_ASSERT(!op_, "a call's own transaction is never inside a business operation");
  run("BEGIN");
  try {
    auto result = body();
    run("COMMIT");
    return result;
  } catch (...) {
    if (conn_) PQclear(PQexec(conn_.get(), "ROLLBACK"));  // the call changes nothing
    throw;
  }
}

void PgStore::read_row(const pg_result* r, int row, Message& out) {
  out.id = static_cast<RowId>(value(r, row, 0));
  out.type = static_cast<std::uint32_t>(value(r, row, 1));
  out.key = static_cast<EntityKey>(value(r, row, 2));
  out.bucket = static_cast<std::uint32_t>(value(r, row, 3));
  out.version = static_cast<std::uint64_t>(value(r, row, 4));
  out.status = static_cast<Status>(value(r, row, 5));
  out.reason = static_cast<Reason>(value(r, row, 6));
  out.attempt = static_cast<std::uint16_t>(value(r, row, 7));
  out.created_at = time_from_ns(value(r, row, 8));
  out.next_attempt = time_from_ns(value(r, row, 9));
  out.fence = static_cast<FenceToken>(value(r, row, 10));
}

// ---- the business operation -------------------------------------------------------------------

void PgStore::begin(Time now) {
  RELAYSIM_ASSERT(!op_, "one business operation at a time");
  run("BEGIN");
  op_ = true;
  now_ = now;
}

std::uint64_t PgStore::write_entity(EntityKey key) {
  RELAYSIM_ASSERT(op_, "an entity is written inside a business operation");
  const Result r = run("INSERT INTO entity (key, version) VALUES ($1, 1)"
                       " ON CONFLICT (key) DO UPDATE SET version = entity.version + 1 RETURNING version",
                       {num(key)});
  return static_cast<std::uint64_t>(value(r.get(), 0, 0));
}

RowId PgStore::add(const NewMessage& n) {
  RELAYSIM_ASSERT(op_, "a message is added inside a business operation");
  RELAYSIM_ASSERT(n.version >= 1, "a message carries its entity's version, as write_entity returned it");
  const Result r = run("INSERT INTO outbox_request (type, key, bucket, version, status, reason, attempt, created_at,"
                       " next_attempt, fence) VALUES ($1, $2, $3, $4, 0, 0, 0, $5, $5, 0) RETURNING id",
                       {num(std::uint64_t{n.type}), num(n.key), num(std::uint64_t{n.bucket}), num(n.version), num(now_)});
  return static_cast<RowId>(value(r.get(), 0, 0));
}

void PgStore::commit() {
  RELAYSIM_ASSERT(op_, "commit needs an open business operation");
  op_ = false;  // a COMMIT that fails has rolled the operation back
  run("COMMIT");
}

void PgStore::rollback() {
  if (!op_) return;
  op_ = false;
  if (conn_) PQclear(PQexec(conn_.get(), "ROLLBACK"));
}

// ---- the leader's writes ----------------------------------------------------------------------

bool PgStore::fenced(FenceToken token) {
  // One statement checks the fence and raises it, and holds the shard's row until the write's
  // commit: another leader's write waits for this one, then reads the fence it left.
  const Result r = run("UPDATE shard SET fence = GREATEST(fence, $1) WHERE id = 1 AND fence <= $1 RETURNING fence",
                       {num(token)});
  return PQntuples(r.get()) == 1;
}

bool PgStore::fence(FenceToken token) {
  RELAYSIM_ASSERT(!op_, "no fence inside a business operation");
  return in_transaction([&] { return fenced(token); });
}

void PgStore::to_processing(Message& m, FenceToken token, Time now, Duration processing_timeout) {
  m.status = Status::processing;
  ++m.attempt;
  m.next_attempt = now + processing_timeout;
  m.fence = token;
}

template <class Body>
std::optional<std::uint32_t> PgStore::fenced_write(FenceToken token, std::vector<Message>& out, Body&& body) {
  out.clear();
  try {
    return in_transaction([&]() -> std::optional<std::uint32_t> {
      if (!fenced(token)) return std::nullopt;
      body();
      return static_cast<std::uint32_t>(out.size());
    });
  } catch (...) {
    out.clear();
    throw;
  }
}

bool PgStore::scan(const Scan& s, std::vector<Message>& out) {
  RELAYSIM_ASSERT(!op_, "no scan inside a business operation");
  RELAYSIM_ASSERT(!s.mark || s.processing_timeout > Duration::zero(), "a processing timeout is longer than zero");
  static constexpr const char* kAny = "SELECT " RELAYSIM_OUTBOX_COLUMNS
                                      " FROM outbox_request AS o WHERE o.status = 0 AND o.next_attempt <= $1"
                                      " ORDER BY o.next_attempt, o.id LIMIT $2";
  static constexpr const char* kPerKey = "SELECT " RELAYSIM_OUTBOX_COLUMNS
                                         " FROM outbox_request AS o WHERE o.status = 0 AND o.next_attempt <= $1 AND "
                                         RELAYSIM_FIRST_OF_KEY " ORDER BY o.next_attempt, o.id LIMIT $2";
  // Marking: the rows are claimed as they are read, and rows another transaction holds are
  // passed over rather than waited for.
  static constexpr const char* kAnyMark = "SELECT " RELAYSIM_OUTBOX_COLUMNS
                                          " FROM outbox_request AS o WHERE o.status = 0 AND o.next_attempt <= $1"
                                          " ORDER BY o.next_attempt, o.id LIMIT $2 FOR UPDATE SKIP LOCKED";
  static constexpr const char* kPerKeyMark = "SELECT " RELAYSIM_OUTBOX_COLUMNS
                                             " FROM outbox_request AS o WHERE o.status = 0 AND o.next_attempt <= $1 AND "
                                             RELAYSIM_FIRST_OF_KEY " ORDER BY o.next_attempt, o.id LIMIT $2"
                                             " FOR UPDATE SKIP LOCKED";
  const bool per_key = s.ordering == Ordering::per_key;
  return fenced_write(s.token, out, [&] {
    const char* sql = s.mark ? (per_key ? kPerKeyMark : kAnyMark) : (per_key ? kPerKey : kAny);
    const Result r = run(sql, {num(s.due_by), num(std::uint64_t{s.limit})});
    for (int i = 0; i < PQntuples(r.get()); ++i) read_row(r.get(), i, out.emplace_back());
    if (!s.mark || out.empty()) return;
    // Marking a message does not finish it, so it changes no other candidate's turn in its key:
    // the rows read above are exactly the ones to mark, in one statement.
    std::string ids = "{";
    for (const Message& m : out) ids += (ids.size() > 1 ? "," : "") + num(m.id);
    ids += "}";
    run("UPDATE outbox_request SET status = 1, attempt = attempt + 1, next_attempt = $2, fence = $3"
        " WHERE id = ANY($1::bigint[])",
        {ids, num(s.now + s.processing_timeout), num(s.token)});
    for (Message& m : out) to_processing(m, s.token, s.now, s.processing_timeout);
  }).has_value();
}

std::optional<std::uint32_t> PgStore::mark(FenceToken token, Time now, Duration processing_timeout,
                                           std::span<const Message> messages, std::vector<Message>& out) {
  RELAYSIM_ASSERT(!op_, "no mark inside a business operation");
  RELAYSIM_ASSERT(processing_timeout > Duration::zero(), "a processing timeout is longer than zero");
  return fenced_write(token, out, [&] {
    // Only a row still pending at the attempt it was read with is marked; RETURNING gives it as
    // it is now.
    for (const Message& m : messages) {
      const Result r = run("UPDATE outbox_request SET status = 1, attempt = attempt + 1, next_attempt = $2, fence = $3"
                           " WHERE id = $1 AND status = 0 AND attempt = $4 RETURNING " RELAYSIM_OUTBOX_COLUMNS,
                           {num(m.id), num(now + processing_timeout), num(token), num(std::uint64_t{m.attempt})});
      if (PQntuples(r.get()) == 1) read_row(r.get(), 0, out.emplace_back());
    }
  });
}

std::optional<std::uint32_t> PgStore::rescue(FenceToken token, Time now, Time overdue_by, std::uint32_t limit,
                                             std::span<const std::uint16_t> max_attempts, std::vector<Message>& out) {
  RELAYSIM_ASSERT(!op_, "no rescue inside a business operation");
  return fenced_write(token, out, [&] {
    {
      const Result r = run("SELECT " RELAYSIM_OUTBOX_COLUMNS " FROM outbox_request WHERE status = 1 AND next_attempt <= $1"
                           " ORDER BY next_attempt, id LIMIT $2 FOR UPDATE",
                           {num(overdue_by), num(std::uint64_t{limit})});
      for (int i = 0; i < PQntuples(r.get()); ++i) read_row(r.get(), i, out.emplace_back());
    }
    for (Message& m : out) {
      const bool spent = m.type < max_attempts.size() && m.attempt >= max_attempts[m.type];
      if (spent) {
        run("UPDATE outbox_request SET status = 3, reason = $2 WHERE id = $1",
            {num(m.id), num(static_cast<std::int64_t>(Reason::exhausted))});
        m.status = Status::failed;
        m.reason = Reason::exhausted;
      } else {
        run("UPDATE outbox_request SET status = 0, next_attempt = $2 WHERE id = $1", {num(m.id), num(now)});
        m.status = Status::pending;
        m.next_attempt = now;
      }
    }
  });
}

// ---- the consumer's ---------------------------------------------------------------------------

Relock PgStore::relock(RowId id, std::uint16_t attempt, Message& out) {
  const std::optional<Message> m = get(id);
  if (!m) return Relock::gone;
  out = *m;
  return relock_of(*m, attempt);
}

bool PgStore::finish(RowId id, std::uint16_t attempt, const Finish& f) {
  RELAYSIM_ASSERT(f.status != Status::processing, "a consumer finishes a message out of processing");
  RELAYSIM_ASSERT(!op_, "no finish inside a business operation");
  // One statement, atomic by itself. A final message keeps its next_attempt, as it had it.
  const Result r = run("UPDATE outbox_request SET status = $3::smallint, reason = $4::smallint,"
                       " next_attempt = CASE WHEN $3::smallint = 0 THEN $5::bigint ELSE next_attempt END"
                       " WHERE id = $1::bigint AND status = 1 AND attempt = $2::integer",
                       {num(id), num(std::uint64_t{attempt}), num(static_cast<std::int64_t>(f.status)),
                        num(static_cast<std::int64_t>(f.reason)), num(f.next_attempt)});
  return std::strcmp(PQcmdTuples(r.get()), "1") == 0;
}

// ---- reads ------------------------------------------------------------------------------------

std::optional<Message> PgStore::get(RowId id) {
  const Result r = run(kSelectById, {num(id)});
  if (PQntuples(r.get()) == 0) return std::nullopt;
  Message m;
  read_row(r.get(), 0, m);
  return m;
}

std::vector<Message> PgStore::rows() {
  const Result r = run("SELECT " RELAYSIM_OUTBOX_COLUMNS " FROM outbox_request ORDER BY id");
  std::vector<Message> out(static_cast<std::size_t>(PQntuples(r.get())));
  for (int i = 0; i < PQntuples(r.get()); ++i) read_row(r.get(), i, out[static_cast<std::size_t>(i)]);
  return out;
}

std::optional<std::uint64_t> PgStore::entity_version(EntityKey key) {
  const Result r = run("SELECT version FROM entity WHERE key = $1", {num(key)});
  if (PQntuples(r.get()) == 0) return std::nullopt;
  return static_cast<std::uint64_t>(value(r.get(), 0, 0));
}

FenceToken PgStore::current_fence() {
  const Result r = run("SELECT fence FROM shard WHERE id = 1");
  RELAYSIM_ASSERT(PQntuples(r.get()) == 1, "the shard table has its row");
  return static_cast<FenceToken>(value(r.get(), 0, 0));
}

StoreCounts PgStore::counts() {
  StoreCounts c;
  const Result r = run("SELECT status, COUNT(*) FROM outbox_request GROUP BY status");
  for (int i = 0; i < PQntuples(r.get()); ++i) {
    const std::int64_t s = value(r.get(), i, 0);
    const auto n = static_cast<std::uint64_t>(value(r.get(), i, 1));
    if (s >= 0 && s < kStatusCount) c.by_status[static_cast<std::size_t>(s)] = n;
    c.messages += n;
  }
  return c;
}

std::optional<Time> PgStore::next_due(Ordering ordering) {
  static constexpr const char* kAny =
      "SELECT (SELECT MIN(next_attempt) FROM outbox_request WHERE status = 0),"
      " (SELECT MIN(next_attempt) FROM outbox_request WHERE status = 1)";
  static constexpr const char* kPerKey =
      "SELECT (SELECT o.next_attempt FROM outbox_request AS o WHERE o.status = 0 AND " RELAYSIM_FIRST_OF_KEY
      " ORDER BY o.next_attempt, o.id LIMIT 1), (SELECT MIN(next_attempt) FROM outbox_request WHERE status = 1)";
  const Result r = run(ordering == Ordering::per_key ? kPerKey : kAny);
  std::optional<Time> next;
  for (int col = 0; col < 2; ++col) {
    if (PQgetisnull(r.get(), 0, col)) continue;
    const Time at = time_from_ns(value(r.get(), 0, col));
    next = next ? std::min(*next, at) : at;
  }
  return next;
}

}  // namespace relaysim::live::outbox
