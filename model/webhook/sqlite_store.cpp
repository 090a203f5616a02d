#include "model/webhook/sqlite_store.h"

#include "model/core/assert.h"
#include "model/webhook/mutants.h"

namespace relaysim::webhook {

namespace {

constexpr int kActiveBelow = static_cast<int>(Status::delivered);

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS requests (
  id           INTEGER PRIMARY KEY,
  cxid         TEXT    NOT NULL,
  request_id   TEXT    NOT NULL,
  payload      TEXT    NOT NULL,
  created_at   INTEGER NOT NULL,
  deadline_at  INTEGER NOT NULL,
  status       INTEGER NOT NULL,
  reason       INTEGER NOT NULL DEFAULT 0,
  attempts     INTEGER NOT NULL DEFAULT 0,
  deferrals    INTEGER NOT NULL DEFAULT 0,
  replays      INTEGER NOT NULL DEFAULT 0,
  due_at       INTEGER NOT NULL,
  not_before   INTEGER NOT NULL,
  last_delay   INTEGER NOT NULL DEFAULT 0,
  lease_owner  INTEGER NOT NULL DEFAULT 0,
  claim_token  INTEGER NOT NULL DEFAULT 0,
  terminal_at  INTEGER NOT NULL DEFAULT 0,
  UNIQUE (cxid, request_id)
);
CREATE INDEX IF NOT EXISTS requests_due ON requests (due_at, id) WHERE status < 3;
CREATE INDEX IF NOT EXISTS requests_ready ON requests (due_at, id) WHERE status IN (0, 2);
CREATE INDEX IF NOT EXISTS requests_expiry ON requests (deadline_at, id) WHERE status < 2;
CREATE TABLE IF NOT EXISTS attempts (
  id               INTEGER PRIMARY KEY,
  request          INTEGER NOT NULL REFERENCES requests (id),
  number           INTEGER NOT NULL,
  pod              INTEGER NOT NULL,
  claim_token      INTEGER NOT NULL,
  started_at       INTEGER NOT NULL,
  finished_at      INTEGER NOT NULL,
  resolved_url     TEXT    NOT NULL,
  serviceb_version INTEGER NOT NULL,
  net_error        INTEGER NOT NULL,
  http_status      INTEGER NOT NULL,
  detail           TEXT    NOT NULL DEFAULT '',
  UNIQUE (request, number)
);
-- The outbox of tenants' notices (Store::claim_notice). AUTOINCREMENT: an id is never reused, so
-- a late notice_sent from a claim that lost its lease cannot remove a newer notice.
CREATE TABLE IF NOT EXISTS notices (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  request  INTEGER NOT NULL,
  life     INTEGER NOT NULL,
  sends    INTEGER NOT NULL DEFAULT 0,
  status   INTEGER NOT NULL,
  reason   INTEGER NOT NULL,
  ended_at INTEGER NOT NULL,
  due_at   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS claim_tokens (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  last INTEGER NOT NULL
);
INSERT OR IGNORE INTO claim_tokens (id, last) VALUES (1, 0);
-- A claim takes the next token in its own statement: the trigger moves the counter on only when
-- a row was really claimed, atomically with the claim.
CREATE TRIGGER IF NOT EXISTS claim_token_taken AFTER UPDATE OF claim_token ON requests
BEGIN
  UPDATE claim_tokens SET last = NEW.claim_token WHERE id = 1;
END;
)sql";
}  // namespace

static_assert(kActiveBelow == 3, "the partial index and queries say status < 3");
static_assert(static_cast<int>(Status::pending) == 0 && static_cast<int>(Status::blocked) == 1 &&
                  static_cast<int>(Status::in_flight) == 2,
              "requests_ready and claimable_statement say status IN (0, 2) for all but blocked");

// A claim: the request `pick` selects becomes in_flight under the next claim token and a lease,
// and is returned with its token.
std::string claim_sql(std::string_view pick) {
  return "UPDATE requests SET status = 2, lease_owner = ?1, due_at = ?2,"
         " claim_token = (SELECT last + 1 FROM claim_tokens WHERE id = 1) WHERE id = (" + std::string(pick) +
         ") RETURNING id, cxid, request_id, payload, created_at, deadline_at, reason, attempts, deferrals, replays,"
         " not_before, last_delay, claim_token";
}

SqliteStore::SqliteStore(const std::string& path, Durability durability) : db_(path, durability) {
  db_.exec(kSchema);
  {
    // A database from before attempts said why nothing was sent gains the column (empty).
    Statement has_detail(db_, "SELECT COUNT(*) FROM pragma_table_info('attempts') WHERE name = 'detail'");
    if (has_detail.step() && has_detail.i64(0) == 0) db_.exec("ALTER TABLE attempts ADD COLUMN detail TEXT NOT NULL DEFAULT ''");
  }
  insert_ = std::make_unique<Statement>(db_,
      "INSERT INTO requests (cxid, request_id, payload, created_at, deadline_at, status, due_at, not_before)"
      " VALUES (?1, ?2, ?3, ?4, ?5, 0, ?4, ?4) ON CONFLICT (cxid, request_id) DO NOTHING RETURNING id");
  find_key_ = std::make_unique<Statement>(db_, "SELECT id, payload FROM requests WHERE cxid = ?1 AND request_id = ?2");
  // Expired: waiting past the deadline. (Due: see claimable_statement.)
  claim_expired_ = std::make_unique<Statement>(db_,
      claim_sql("SELECT id FROM requests WHERE status < 2 AND deadline_at < ?3 ORDER BY deadline_at, id LIMIT 1").c_str());
  complete_ = std::make_unique<Statement>(db_,
      "UPDATE requests SET status = ?3, reason = ?4, due_at = ?5, not_before = ?6, last_delay = ?7,"
      " attempts = attempts + ?8, deferrals = deferrals + ?9, terminal_at = ?10, lease_owner = 0"
      " WHERE id = ?1 AND claim_token = ?2 AND status = 2");
  add_attempt_ = std::make_unique<Statement>(db_,
      "INSERT INTO attempts (request, number, pod, claim_token, started_at, finished_at, resolved_url,"
      " serviceb_version, net_error, http_status, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  replay_ = std::make_unique<Statement>(db_,
      "UPDATE requests SET status = 0, reason = 0, deadline_at = ?2, due_at = ?3, not_before = ?3,"
      " last_delay = 0, deferrals = 0, terminal_at = 0, replays = replays + 1 WHERE id = ?1 AND status >= 3");
  get_ = std::make_unique<Statement>(db_,
      "SELECT id, cxid, request_id, payload, created_at, deadline_at, status, reason, attempts, deferrals,"
      " replays, due_at, not_before, last_delay, lease_owner, claim_token, terminal_at"
      " FROM requests WHERE id = ?1");
  attempts_ = std::make_unique<Statement>(db_,
      "SELECT request, number, pod, claim_token, started_at, finished_at, resolved_url, serviceb_version,"
      " net_error, http_status, detail FROM attempts WHERE request = ?1 ORDER BY number");
  count_status_ = std::make_unique<Statement>(db_, "SELECT status, COUNT(*) FROM requests GROUP BY status");
  count_attempts_ = std::make_unique<Statement>(db_, "SELECT COUNT(*) FROM attempts");
  with_status_ = std::make_unique<Statement>(db_, "SELECT id FROM requests WHERE status = ?1 AND id > ?2 ORDER BY id LIMIT ?3");
}

SqliteStore::~SqliteStore() = default;

CreateResult SqliteStore::create(const NewRequest& req) {
  RequestId created = 0;
  {
    ResetOnExit guard(*insert_);
    insert_->bind(1, req.cxid).bind(2, req.request_id).bind(3, req.payload).bind(4, req.created_at)
        .bind(5, req.deadline_at);
    if (insert_->step()) created = static_cast<RequestId>(insert_->i64(0));
  }
  if (created != 0) {
    db_.wrote();
    return {CreateOutcome::created, created};
  }
  ResetOnExit guard(*find_key_);
  find_key_->bind(1, req.cxid).bind(2, req.request_id);
  RELAYSIM_ASSERT(find_key_->step(), "a conflicting insert must leave the original row");
  const auto id = static_cast<RequestId>(find_key_->i64(0));
  return {find_key_->text_view(1) == req.payload ? CreateOutcome::duplicate : CreateOutcome::conflict, id};
}

Db::Statement& SqliteStore::claimable_statement(std::array<std::unique_ptr<Statement>, 4>& slots, Claimable which,
                                               bool next_due) {
  // Due: pending, blocked (unless left out), or in flight with its lease expired (a rescue). Each
  // condition is written exactly as a partial index's WHERE, so SQLite reads that index.
  const bool rescue = !planted(mutant::crash_loses_leased_work);  // the bug: expired leases never claimed again
  const char* statuses = which == Claimable::all ? (rescue ? "status < 3" : "status < 2")
                                                 : (rescue ? "status IN (0, 2)" : "status = 0");
  std::unique_ptr<Statement>& slot = slots[(which == Claimable::all ? 0 : 1) + (rescue ? 0 : 2)];
  if (slot) return *slot;
  const std::string pick = std::string(next_due ? "SELECT due_at" : "SELECT id") + " FROM requests WHERE " + statuses +
                           (next_due ? "" : " AND due_at <= ?3") + " ORDER BY due_at, id LIMIT 1";
  return db_.prepared(slot, (next_due ? pick : claim_sql(pick)).c_str());
}

bool SqliteStore::claim_due(Time now, PodId pod, Duration lease, RequestRow& out, Claimable which) {
  // Most calls find nothing due (every pod asks after every completion). Reading the due index
  // answers that in a fraction of the time an UPDATE that changes nothing takes.
  if (const std::optional<Time> next = next_due(which); !next || *next > now) return false;
  const bool claimed = claim_with(claimable_statement(claim_, which, false), now, pod, lease, out);
  if (claimed) db_.wrote();
  return claimed;
}

bool SqliteStore::claim_expired(Time now, PodId pod, Duration lease, RequestRow& out) {
  // Usually nothing has expired. A read on the expiry index answers that without the write
  // transaction an UPDATE opens even when it changes no row.
  {
    Statement& probe = db_.prepared(probe_expired_,
        "SELECT 1 FROM requests WHERE status < 2 AND deadline_at < ?1 ORDER BY deadline_at, id LIMIT 1");
    ResetOnExit guard(probe);
    probe.bind(1, now);
    if (!probe.step()) return false;
  }
  const bool claimed = claim_with(*claim_expired_, now, pod, lease, out);
  if (claimed) db_.wrote();
  return claimed;
}

bool SqliteStore::claim_with(Statement& claim, Time now, PodId pod, Duration lease, RequestRow& out) {
  // The token comes from the database in the claim's own statement (claim_sql and the
  // claim_token_taken trigger), so tokens increase in claim order even when several processes
  // share the database, and across restarts.
  ResetOnExit guard(claim);
  claim.bind(1, pod).bind(2, now + lease).bind(3, now);
  if (!claim.step()) return false;
  out.id = static_cast<RequestId>(claim.i64(0));
  claim.text(1, out.cxid);
  claim.text(2, out.request_id);
  claim.text(3, out.payload);
  out.created_at = claim.time(4);
  out.deadline_at = claim.time(5);
  out.status = Status::in_flight;
  out.reason = static_cast<Reason>(claim.i64(6));
  out.attempts = static_cast<std::uint32_t>(claim.i64(7));
  out.deferrals = static_cast<std::uint32_t>(claim.i64(8));
  out.replays = static_cast<std::uint32_t>(claim.i64(9));
  out.not_before = claim.time(10);
  out.last_delay = Duration{claim.i64(11)};
  out.due_at = now + lease;
  out.lease_owner = pod;
  out.claim_token = static_cast<ClaimToken>(claim.i64(12));
  out.terminal_at = Time{};
  RELAYSIM_ASSERT(!claim.step(), "a claim takes exactly one row");
  return true;
}

bool SqliteStore::complete(RequestId id, ClaimToken token, const Completion& c) {
  RELAYSIM_ASSERT(c.status != Status::in_flight, "a completion must leave in_flight");
  // The state change and its attempt row in one transaction: both or neither.
  Db::Transaction tx(db_);
  {
    Statement* q = complete_.get();
    if (planted(mutant::completion_ignores_token)) {
      q = &db_.prepared(complete_any_token_,
          "UPDATE requests SET status = ?3, reason = ?4, due_at = ?5, not_before = ?6, last_delay = ?7,"
          " attempts = attempts + ?8, deferrals = deferrals + ?9, terminal_at = ?10, lease_owner = 0"
          " WHERE id = ?1 AND ?2 IS NOT NULL AND status = 2");
    }
    Statement& complete = *q;
    ResetOnExit guard(complete);
    complete.bind(1, id).bind(2, token).bind(3, static_cast<int>(c.status)).bind(4, static_cast<int>(c.reason))
        .bind(5, c.due_at).bind(6, c.not_before).bind(7, c.last_delay)
        .bind(8, c.attempt != nullptr ? 1 : 0).bind(9, c.status == Status::blocked ? 1 : 0)
        .bind(10, is_terminal(c.status) ? to_ns(c.at) : 0);
    complete.step();
  }
  if (db_.changes() == 0) {
    tx.commit();
    return false;
  }
  if (c.attempt != nullptr) {
    const AttemptRow& a = *c.attempt;
    RELAYSIM_ASSERT(a.request == id, "an attempt belongs to the request it completes");
    RELAYSIM_ASSERT(a.claim_token == token, "an attempt is recorded under the claim that made it");
    Statement* insert = add_attempt_.get();
    if (planted(mutant::completion_ignores_token)) {
      // A stale claimant may append an attempt number twice; keep the first instead of failing.
      insert = &db_.prepared(add_attempt_or_ignore_,
          "INSERT OR IGNORE INTO attempts (request, number, pod, claim_token, started_at, finished_at,"
          " resolved_url, serviceb_version, net_error, http_status, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    }
    insert->bind(1, a.request).bind(2, a.number).bind(3, a.pod).bind(4, a.claim_token).bind(5, a.started_at)
        .bind(6, a.finished_at).bind(7, a.resolved_url).bind(8, a.serviceb_version)
        .bind(9, static_cast<int>(a.error)).bind(10, a.http_status).bind(11, a.detail);
    insert->run();
  }
  if (c.notify) {
    RELAYSIM_ASSERT(c.status == Status::failed || c.status == Status::dead_lettered, "only a failure is noticed");
    Statement& notice = db_.prepared(add_notice_,
        "INSERT INTO notices (request, life, status, reason, ended_at, due_at)"
        " SELECT id, replays, ?2, ?3, ?4, ?4 FROM requests WHERE id = ?1");
    notice.bind(1, id).bind(2, static_cast<int>(c.status)).bind(3, static_cast<int>(c.reason)).bind(4, c.at);
    notice.run();
  }
  tx.commit();
  db_.wrote();
  return true;
}

// A notice from a row of `q`'s columns: id, request, life, sends, status, reason, ended_at.
void SqliteStore::read_notice(const Statement& q, Notice& out) {
  out.id = static_cast<NoticeId>(q.i64(0));
  out.request = static_cast<RequestId>(q.i64(1));
  out.life = static_cast<std::uint32_t>(q.i64(2));
  out.sends = static_cast<std::uint32_t>(q.i64(3));
  out.status = static_cast<Status>(q.i64(4));
  out.reason = static_cast<Reason>(q.i64(5));
  out.at = q.time(6);
}

bool SqliteStore::claim_notice(Time now, Duration lease, Notice& out) {
  Statement& claim = db_.prepared(claim_notice_,
      "UPDATE notices SET sends = sends + 1, due_at = ?2"
      " WHERE id = (SELECT id FROM notices WHERE due_at <= ?1 ORDER BY id LIMIT 1)"
      " RETURNING id, request, life, sends, status, reason, ended_at");
  ResetOnExit guard(claim);
  claim.bind(1, now).bind(2, now + lease);
  if (!claim.step()) return false;
  read_notice(claim, out);
  RELAYSIM_ASSERT(!claim.step(), "a claim takes exactly one notice");
  db_.wrote();
  return true;
}

void SqliteStore::notice_sent(NoticeId id) {
  Statement& sent = db_.prepared(notice_sent_, "DELETE FROM notices WHERE id = ?1");
  sent.bind(1, id);
  sent.run();
  if (db_.changes() != 0) db_.wrote();
}

std::optional<Time> SqliteStore::next_notice() {
  Statement& q = db_.prepared(next_notice_, "SELECT MIN(due_at) FROM notices");
  ResetOnExit guard(q);
  if (!q.step() || q.is_null(0)) return std::nullopt;
  return q.time(0);
}

std::vector<Notice> SqliteStore::notices() {
  Statement& q = db_.prepared(notices_,
      "SELECT id, request, life, sends, status, reason, ended_at FROM notices ORDER BY id");
  ResetOnExit guard(q);
  std::vector<Notice> out;
  while (q.step()) read_notice(q, out.emplace_back());
  return out;
}

std::optional<Time> SqliteStore::next_due(Claimable which) {
  Statement& q = claimable_statement(next_due_, which, true);
  ResetOnExit guard(q);
  if (!q.step()) return std::nullopt;
  return q.time(0);
}

std::optional<Time> SqliteStore::next_expiry() {
  Statement& q = db_.prepared(next_expiry_, "SELECT deadline_at FROM requests WHERE status < 2 ORDER BY deadline_at, id LIMIT 1");
  ResetOnExit guard(q);
  if (!q.step()) return std::nullopt;
  return q.time(0);
}

ReplayOutcome SqliteStore::replay(RequestId id, Time now, Time new_deadline) {
  {
    ResetOnExit guard(*replay_);
    replay_->bind(1, static_cast<std::int64_t>(id)).bind(2, new_deadline).bind(3, now);
    replay_->step();
  }
  if (db_.changes() == 1) {
    db_.wrote();
    return ReplayOutcome::replayed;
  }
  return get(id).has_value() ? ReplayOutcome::not_terminal : ReplayOutcome::not_found;
}

std::optional<RequestRow> SqliteStore::get(RequestId id) {
  ResetOnExit guard(*get_);
  get_->bind(1, static_cast<std::int64_t>(id));
  if (!get_->step()) return std::nullopt;
  RequestRow r;
  r.id = static_cast<RequestId>(get_->i64(0));
  get_->text(1, r.cxid);
  get_->text(2, r.request_id);
  get_->text(3, r.payload);
  r.created_at = get_->time(4);
  r.deadline_at = get_->time(5);
  r.status = static_cast<Status>(get_->i64(6));
  r.reason = static_cast<Reason>(get_->i64(7));
  r.attempts = static_cast<std::uint32_t>(get_->i64(8));
  r.deferrals = static_cast<std::uint32_t>(get_->i64(9));
  r.replays = static_cast<std::uint32_t>(get_->i64(10));
  r.due_at = get_->time(11);
  r.not_before = get_->time(12);
  r.last_delay = Duration{get_->i64(13)};
  r.lease_owner = static_cast<PodId>(get_->i64(14));
  r.claim_token = static_cast<ClaimToken>(get_->i64(15));
  r.terminal_at = get_->time(16);
  return r;
}

std::vector<AttemptRow> SqliteStore::attempts(RequestId id) {
  ResetOnExit guard(*attempts_);
  attempts_->bind(1, static_cast<std::int64_t>(id));
  std::vector<AttemptRow> out;
  while (attempts_->step()) {
    AttemptRow& a = out.emplace_back();
    a.request = static_cast<RequestId>(attempts_->i64(0));
    a.number = static_cast<std::uint32_t>(attempts_->i64(1));
    a.pod = static_cast<PodId>(attempts_->i64(2));
    a.claim_token = static_cast<ClaimToken>(attempts_->i64(3));
    a.started_at = attempts_->time(4);
    a.finished_at = attempts_->time(5);
    attempts_->text(6, a.resolved_url);
    a.serviceb_version = static_cast<std::uint64_t>(attempts_->i64(7));
    a.error = static_cast<NetError>(attempts_->i64(8));
    a.http_status = static_cast<int>(attempts_->i64(9));
    attempts_->text(10, a.detail);
  }
  return out;
}

StoreCounts SqliteStore::counts() {
  StoreCounts c;
  {
    ResetOnExit guard(*count_status_);
    while (count_status_->step()) {
      const auto s = count_status_->i64(0);
      if (s >= 0 && s < kStatusCount) c.by_status[static_cast<std::size_t>(s)] = static_cast<std::uint64_t>(count_status_->i64(1));
    }
  }
  ResetOnExit guard(*count_attempts_);
  if (count_attempts_->step()) c.attempts = static_cast<std::uint64_t>(count_attempts_->i64(0));
  return c;
}

std::vector<RequestId> SqliteStore::with_status(Status status, RequestId after, std::size_t limit) {
  std::vector<RequestId> out;
  ResetOnExit guard(*with_status_);
  with_status_->bind(1, static_cast<int>(status)).bind(2, after).bind(3, static_cast<std::uint64_t>(limit));
  while (with_status_->step()) out.push_back(static_cast<RequestId>(with_status_->i64(0)));
  return out;
}

}  // namespace relaysim::webhook
