#include "model/sms/sqlite_store.h"

#include <nlohmann/json.hpp>

#include "model/core/assert.h"
#include "model/sms/mutants.h"

namespace relaysim::sms {

namespace {

constexpr int kFinalFrom = static_cast<int>(kFirstFinal);
static_assert(kFinalFrom == 4, "the partial index and the queries say status < 4");

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS businesses (
  id     INTEGER PRIMARY KEY,
  name   TEXT    NOT NULL,
  state  INTEGER NOT NULL,
  quota  INTEGER NOT NULL,
  epoch  INTEGER NOT NULL,
  senders   TEXT NOT NULL DEFAULT '[]',  -- JSON arrays: what its application asked for
  templates TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS quota_used (
  business INTEGER NOT NULL,
  period   INTEGER NOT NULL,
  used     INTEGER NOT NULL CHECK (used >= 0),
  PRIMARY KEY (business, period)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (
  id          INTEGER PRIMARY KEY,
  business    INTEGER NOT NULL,
  biz_type    TEXT    NOT NULL,
  biz_id      TEXT    NOT NULL,
  recipient   INTEGER NOT NULL,
  template_id INTEGER NOT NULL,
  content     INTEGER NOT NULL,
  campaign    INTEGER NOT NULL,
  resend_of   INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  send_at     INTEGER NOT NULL,
  due_at      INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  final_at    INTEGER NOT NULL DEFAULT 0,
  period      INTEGER NOT NULL,
  claim_token INTEGER NOT NULL DEFAULT 0,
  lease_owner INTEGER NOT NULL DEFAULT 0,
  attempts    INTEGER NOT NULL DEFAULT 0,
  segments    INTEGER NOT NULL,
  provider    INTEGER NOT NULL,
  kind        INTEGER NOT NULL,
  status      INTEGER NOT NULL,
  reason      INTEGER NOT NULL DEFAULT 0,
  charged     INTEGER NOT NULL,
  accepted    INTEGER NOT NULL DEFAULT 0,
  history     TEXT    NOT NULL,
  UNIQUE (business, biz_type, biz_id)
);
CREATE INDEX IF NOT EXISTS messages_due ON messages (due_at, id) WHERE status < 4;
CREATE TABLE IF NOT EXISTS claim_tokens (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  last INTEGER NOT NULL
);
INSERT OR IGNORE INTO claim_tokens (id, last) VALUES (1, 0);
CREATE TABLE IF NOT EXISTS campaigns (
  id          INTEGER PRIMARY KEY,
  business    INTEGER NOT NULL,
  epoch       INTEGER NOT NULL,
  biz_type    TEXT    NOT NULL,
  biz_id      TEXT    NOT NULL,
  filter      TEXT    NOT NULL,
  template_id INTEGER NOT NULL,
  content     INTEGER NOT NULL,
  segments    INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  send_at     INTEGER NOT NULL,
  cursor      INTEGER NOT NULL DEFAULT 0,
  messages    INTEGER NOT NULL DEFAULT 0,
  skipped     INTEGER NOT NULL DEFAULT 0,
  state       INTEGER NOT NULL DEFAULT 0,
  stopped_by  INTEGER NOT NULL DEFAULT 0,
  claim_token INTEGER NOT NULL DEFAULT 0,
  owner       INTEGER NOT NULL DEFAULT 0,
  due_at      INTEGER NOT NULL,
  UNIQUE (business, biz_type, biz_id)
);
CREATE TABLE IF NOT EXISTS cap_places (
  recipient INTEGER NOT NULL,
  message   INTEGER NOT NULL,
  at        INTEGER NOT NULL,
  PRIMARY KEY (recipient, at, message)
) WITHOUT ROWID;
)sql";

constexpr const char* kCampaignColumns =
    "id, business, epoch, biz_type, biz_id, filter, template_id, content, segments, created_at, send_at, cursor,"
    " messages, skipped, state, stopped_by, claim_token, owner, due_at";

constexpr const char* kColumns =
    "id, business, biz_type, biz_id, recipient, template_id, content, campaign, resend_of, created_at, send_at,"
    " due_at, updated_at, final_at, period, claim_token, lease_owner, attempts, segments, provider, kind, status,"
    " reason, charged, accepted";

// A message's status history lives in its row: one JSON array [at, status, reason, provider, pod]
// per change, joined by commas (so '[' || history || ']' is a JSON array), appended by the
// statement that makes the change. Kept in a table of its own it cost a second B-tree insert, an
// index entry and a statement per change, a third of a message's time; appending is a plain
// concatenation, where json_insert would re-parse the whole array. It reads back with json_each
// (see history()), and `SELECT id, history FROM messages` in the sqlite3 shell shows it.
std::string append_history(const char* at, const char* status, const char* reason, const char* provider,
                           const char* pod) {
  return std::string("history = history || ',' || json_array(") + at + ", " + status + ", " + reason + ", " + provider +
         ", " + pod + ")";
}

std::string select_row(const char* where) { return std::string("SELECT ") + kColumns + " FROM messages WHERE " + where; }

// The due work, with the planted bug's blind spot when it is planted.
const char* due_filter() {
  return planted(mutant::compensation_skips_status) ? "status IN (0, 1, 3)" : "status < 4";
}

}  // namespace

SqliteStore::SqliteStore(const std::string& path, Durability durability) : db_(path, durability) {
  db_.exec(kSchema);
}

SqliteStore::~SqliteStore() = default;

void SqliteStore::read_row(Statement& s, MessageRow& out) {
  out.id = static_cast<MessageId>(s.i64(0));
  out.business = static_cast<BusinessId>(s.i64(1));
  s.text(2, out.biz_type);
  s.text(3, out.biz_id);
  out.recipient = static_cast<Recipient>(s.i64(4));
  out.template_id = static_cast<std::uint32_t>(s.i64(5));
  out.content = static_cast<std::uint64_t>(s.i64(6));
  out.campaign = static_cast<std::uint32_t>(s.i64(7));
  out.resend_of = static_cast<MessageId>(s.i64(8));
  out.created_at = s.time(9);
  out.send_at = s.time(10);
  out.due_at = s.time(11);
  out.updated_at = s.time(12);
  out.final_at = s.time(13);
  out.period = static_cast<std::uint32_t>(s.i64(14));
  out.claim_token = static_cast<ClaimToken>(s.i64(15));
  out.lease_owner = static_cast<PodId>(s.i64(16));
  out.attempts = static_cast<std::uint16_t>(s.i64(17));
  out.segments = static_cast<std::uint16_t>(s.i64(18));
  out.provider = static_cast<ProviderId>(s.i64(19));
  out.kind = static_cast<Kind>(s.i64(20));
  out.status = static_cast<Status>(s.i64(21));
  out.reason = static_cast<Reason>(s.i64(22));
  out.charged = s.i64(23) != 0;
  out.accepted = s.i64(24) != 0;
}

std::optional<ExistingMessage> SqliteStore::find_key(BusinessId business, std::string_view biz_type,
                                                        std::string_view biz_id) {
  Statement& q = db_.prepared(find_key_,
      planted(mutant::dedup_on_biz_id_alone)
          ? "SELECT id, content, status FROM messages WHERE business = ?1 AND ?2 IS NOT NULL AND biz_id = ?3 ORDER BY id LIMIT 1"
          : "SELECT id, content, status FROM messages WHERE business = ?1 AND biz_type = ?2 AND biz_id = ?3");
  ResetOnExit guard(q);
  q.bind(1, business).bind(2, biz_type).bind(3, biz_id);
  if (!q.step()) return std::nullopt;
  return ExistingMessage{static_cast<MessageId>(q.i64(0)), static_cast<std::uint64_t>(q.i64(1)),
                         static_cast<Status>(q.i64(2))};
}

// Two statements rather than UPDATE ... RETURNING, which costs SQLite a temporary table; in the
// caller's transaction, so no other claim comes between them.
ClaimToken SqliteStore::take_token() {
  RELAYSIM_ASSERT(db_.in_transaction(), "a claim token is taken inside the claim's transaction");
  db_.prepared(take_token_, "UPDATE claim_tokens SET last = last + 1 WHERE id = 1").run();
  Statement& q = db_.prepared(last_token_, "SELECT last FROM claim_tokens WHERE id = 1");
  ResetOnExit guard(q);
  RELAYSIM_ASSERT(q.step(), "the claim token counter has its row");
  return static_cast<ClaimToken>(q.i64(0));
}

void SqliteStore::charge(BusinessId business, std::uint32_t period, std::int64_t units) {
  RELAYSIM_ASSERT(units != 0, "a charge or a refund moves at least one unit");
  // A refund only updates: an insert of a negative row would fail the CHECK before the upsert.
  Statement& q = units > 0 ? db_.prepared(charge_,
                                 "INSERT INTO quota_used (business, period, used) VALUES (?1, ?2, ?3)"
                                 " ON CONFLICT (business, period) DO UPDATE SET used = used + excluded.used")
                           : db_.prepared(refund_, "UPDATE quota_used SET used = used + ?3 WHERE business = ?1 AND period = ?2");
  q.bind(1, business).bind(2, period).bind(3, units);
  q.run();
  RELAYSIM_ASSERT(db_.changes() == 1, "a refund needs a charge");
}

AcceptResult SqliteStore::accept(const AcceptRequest& req) {
  RELAYSIM_ASSERT(!req.messages.empty(), "a request carries at least one message");
  RELAYSIM_ASSERT(req.claim_for == 0 || req.lease > Duration::zero(), "a claim at accept has a lease longer than zero");
  Db::Transaction tx(db_);
  const std::optional<BusinessRow> biz = business(req.business);
  AcceptResult result = judge_accept(req, biz ? &*biz : nullptr, quota_used(req.business, req.period),
                                     [&](std::string_view type, std::string_view id) { return find_key(req.business, type, id); },
                                     [&](MessageId id) -> std::optional<Original> {
                                       Statement& q = db_.prepared(original_, "SELECT business, status FROM messages WHERE id = ?1");
                                       ResetOnExit guard(q);
                                       q.bind(1, id);
                                       if (!q.step()) return std::nullopt;
                                       return Original{static_cast<BusinessId>(q.i64(0)), static_cast<Status>(q.i64(1))};
                                     });
  if (result.outcome != AcceptOutcome::accepted) return result;
  Statement& insert = db_.prepared(insert_,
      "INSERT INTO messages (business, biz_type, biz_id, recipient, template_id, content, campaign, resend_of,"
      " created_at, send_at, due_at, updated_at, period, claim_token, lease_owner, segments, provider, kind, status,"
      " charged, history) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?9, ?12, ?13, ?14, ?15, ?16, ?17, ?18, 1,"
      " json_array(?9, ?18, ?19, ?16, ?14))"
      " ON CONFLICT (business, biz_type, biz_id) DO NOTHING");
  for (const NewMessage& m : req.messages) {
    const bool claim = req.claim_for != 0 && m.send_at <= req.now;
    const ClaimToken token = claim ? take_token() : 0;
    if (claim && result.first_token == 0) result.first_token = token;
    const Status status = claim ? Status::in_flight : Status::pending;
    MessageId id = 0;
    {
      ResetOnExit guard(insert);
      insert.bind(1, req.business).bind(2, m.biz_type).bind(3, m.biz_id).bind(4, m.recipient).bind(5, m.template_id)
          .bind(6, m.content).bind(7, m.campaign).bind(8, m.resend_of).bind(9, req.now).bind(10, m.send_at)
          .bind(11, claim                                      ? req.now + req.lease
                    : planted(mutant::scheduled_sent_early) ? req.now
                                                            : std::max(m.send_at, req.now)).bind(12, req.period).bind(13, token)
          .bind(14, claim ? req.claim_for : 0).bind(15, static_cast<int>(m.segments)).bind(16, static_cast<int>(kNoProvider))
          .bind(17, static_cast<int>(m.kind)).bind(18, static_cast<int>(status)).bind(19, static_cast<int>(Reason::none));
      insert.run();
      if (db_.changes() == 1) id = static_cast<MessageId>(db_.last_insert_rowid());
    }
    RELAYSIM_ASSERT(id != 0, "a key is inserted once: checked above, in this transaction");
    if (result.first == 0) result.first = id;
  }
  charge(req.business, req.period, static_cast<std::int64_t>(req.messages.size()));
  tx.commit();
  db_.wrote();
  result.quota_left -= req.messages.size();
  return result;
}

std::optional<Status> SqliteStore::claim_due(Time now, PodId pod, Duration lease, MessageRow& out) {
  RELAYSIM_ASSERT(pod != 0, "a claim is held by a pod (0 means none)");
  RELAYSIM_ASSERT(lease > Duration::zero(), "a claim's lease is longer than zero");
  // Most calls find nothing due; reading the due index answers that without a write.
  if (const std::optional<Time> next = next_due(); !next || *next > now) return std::nullopt;
  Db::Transaction tx(db_);
  Statement& pick = db_.prepared(pick_due_,
      (std::string("SELECT id, status FROM messages WHERE ") + due_filter() +
       " AND due_at <= ?1 ORDER BY due_at, id LIMIT 1").c_str());
  MessageId id = 0;
  Status prior = Status::pending;
  {
    ResetOnExit guard(pick);
    pick.bind(1, now);
    if (!pick.step()) return std::nullopt;
    id = static_cast<MessageId>(pick.i64(0));
    prior = static_cast<Status>(pick.i64(1));
  }
  const ClaimToken token = take_token();
  static const std::string sql =
      "UPDATE messages SET status = ?6, reason = ?7, lease_owner = ?2, due_at = ?3, updated_at = ?4, claim_token = ?5, " +
      append_history("?4", "?6", "?7", "provider", "?2") + " WHERE id = ?1 RETURNING " + kColumns;
  Statement& claim = db_.prepared(claim_, sql.c_str());
  {
    ResetOnExit guard(claim);
    claim.bind(1, id).bind(2, pod).bind(3, now + lease).bind(4, now).bind(5, token)
        .bind(6, static_cast<int>(Status::in_flight)).bind(7, static_cast<int>(Reason::none));
    RELAYSIM_ASSERT(claim.step(), "the picked message is there to claim");
    read_row(claim, out);
  }
  tx.commit();
  db_.wrote();
  return prior;
}

bool SqliteStore::complete(MessageId id, ClaimToken token, const Completion& c) {
  RELAYSIM_ASSERT(c.status != Status::in_flight, "a completion must leave in_flight");
  // The update is one statement, atomic by itself; a transaction is opened only when a refund
  // (or the planted per-attempt charge) may follow it — most completions leave in_flight for
  // submitted or pending, and a savepoint per completion was a good part of their cost.
  const bool may_charge = (is_final(c.status) && (refunds(c.status, true) || refunds(c.status, false))) ||
                          (planted(mutant::quota_charged_per_attempt) && c.attempts > 0);
  std::optional<Db::Transaction> tx;
  if (may_charge) tx.emplace(db_);
  // The history names the provider the row names after the change. Without a charge to follow,
  // the update returns nothing: RETURNING costs SQLite a temporary table per statement.
  static const std::string update =
      "UPDATE messages SET status = ?3, reason = ?4, due_at = ?5, updated_at = ?6, final_at = ?7,"
      " attempts = attempts + ?8, provider = CASE WHEN ?8 THEN ?9 ELSE provider END,"
      " accepted = accepted OR ?10, lease_owner = 0, " +
      append_history("?6", "?3", "?4", "CASE WHEN ?8 THEN ?9 ELSE provider END", "?11") +
      " WHERE id = ?1 AND claim_token = ?2 AND status = 1";
  static const std::string returning = update + " RETURNING business, period, charged, accepted, attempts";
  Statement& q = may_charge ? db_.prepared(complete_, returning.c_str()) : db_.prepared(complete_quietly_, update.c_str());
  q.bind(1, id).bind(2, token).bind(3, static_cast<int>(c.status)).bind(4, static_cast<int>(c.reason))
      .bind(5, is_final(c.status) ? Time{} : c.due_at).bind(6, c.at).bind(7, is_final(c.status) ? c.at : Time{})
      .bind(8, c.attempts).bind(9, static_cast<int>(c.provider)).bind(10, c.accepted ? 1 : 0).bind(11, c.pod);
  if (!may_charge) {
    q.run();
    if (db_.changes() == 0) return false;  // fenced off: not in flight under this token
    db_.wrote();
    return true;
  }
  BusinessId business = 0;
  std::uint32_t period = 0;
  bool charged = false, accepted = false;
  std::uint32_t attempts = 0;
  {
    ResetOnExit guard(q);
    if (!q.step()) return false;  // fenced off
    business = static_cast<BusinessId>(q.i64(0));
    period = static_cast<std::uint32_t>(q.i64(1));
    charged = q.i64(2) != 0;
    accepted = q.i64(3) != 0;
    attempts = static_cast<std::uint32_t>(q.i64(4));
  }
  if (planted(mutant::quota_charged_per_attempt) && c.attempts > 0 && attempts > 1) charge(business, period, 1);
  if (is_final(c.status) && charged && refunds(c.status, accepted)) {
    Statement& u = db_.prepared(uncharge_, "UPDATE messages SET charged = 0 WHERE id = ?1");
    u.bind(1, id);
    u.run();
    charge(business, period, -1);
  }
  if (tx) tx->commit();
  db_.wrote();
  return true;
}

ReceiptOutcome SqliteStore::receipt(MessageId id, bool delivered, Time at) {
  // One statement (the history is in the row): atomic without a transaction.
  const Status status = delivered ? Status::delivered : Status::undelivered;
  static const std::string sql =
      "UPDATE messages SET status = ?2, reason = ?3, accepted = 1, lease_owner = 0, due_at = 0, updated_at = ?4,"
      " final_at = ?4, " + append_history("?4", "?2", "?3", "provider", "0") + " WHERE id = ?1 AND status < 4";
  Statement& q = db_.prepared(receipt_, sql.c_str());
  q.bind(1, id).bind(2, static_cast<int>(status)).bind(3, static_cast<int>(Reason::receipt)).bind(4, at);
  q.run();
  if (db_.changes() == 0) {
    Statement& e = db_.prepared(exists_, "SELECT 1 FROM messages WHERE id = ?1");
    ResetOnExit g(e);
    e.bind(1, id);
    return e.step() ? ReceiptOutcome::already_final : ReceiptOutcome::not_found;
  }
  db_.wrote();
  return ReceiptOutcome::applied;
}

std::optional<Time> SqliteStore::next_due() {
  // Pods ask after every event that frees a worker, and mostly nothing has changed since the last
  // answer: while this connection is the only writer, the answer stands until it writes.
  const std::optional<Db::WriteMark> mark = db_.sole_writer_mark();
  if (mark && next_due_seen_.mark == *mark) return next_due_seen_.value;
  if (!next_due_) {
    db_.prepared(next_due_,
                 (std::string("SELECT due_at FROM messages WHERE ") + due_filter() + " ORDER BY due_at, id LIMIT 1").c_str());
  }
  Statement& q = *next_due_;
  ResetOnExit guard(q);
  const std::optional<Time> next = q.step() ? std::optional<Time>(q.time(0)) : std::nullopt;
  if (mark) next_due_seen_ = {*mark, next};
  return next;
}

BusinessId SqliteStore::add_business(const BusinessRow& row) {
  // One statement: the id is the next after the largest, chosen and taken under the write lock.
  Statement& q = db_.prepared(add_business_,
      "INSERT INTO businesses (id, name, state, quota, epoch, senders, templates)"
      " VALUES ((SELECT COALESCE(MAX(id), 0) + 1 FROM businesses), ?1, ?2, ?3, ?4, ?5, ?6) RETURNING id");
  ResetOnExit guard(q);
  const std::string senders = nlohmann::json(row.senders).dump();
  const std::string templates = nlohmann::json(row.templates).dump();
  q.bind(1, row.name).bind(2, static_cast<int>(row.state)).bind(3, row.quota).bind(4, row.epoch).bind(5, senders)
      .bind(6, templates);
  RELAYSIM_ASSERT(q.step(), "an insert with RETURNING returns its row");
  const auto id = static_cast<BusinessId>(q.i64(0));
  while (q.step()) {
  }
  db_.wrote();
  return id;
}

void SqliteStore::put_business(const BusinessRow& row) {
  RELAYSIM_ASSERT(row.id != 0, "business ids count from 1");
  Statement& q = db_.prepared(put_business_,
      "INSERT INTO businesses (id, name, state, quota, epoch, senders, templates) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
      " ON CONFLICT (id) DO UPDATE SET name = excluded.name, state = excluded.state, quota = excluded.quota,"
      " epoch = excluded.epoch, senders = excluded.senders, templates = excluded.templates");
  const std::string senders = nlohmann::json(row.senders).dump();
  const std::string templates = nlohmann::json(row.templates).dump();
  q.bind(1, row.id).bind(2, row.name).bind(3, static_cast<int>(row.state)).bind(4, row.quota).bind(5, row.epoch)
      .bind(6, senders).bind(7, templates);
  q.run();
  db_.wrote();
}

bool SqliteStore::move_business(BusinessId id, GrantState from, GrantState to, bool new_epoch) {
  Statement& q = db_.prepared(move_business_,
                              "UPDATE businesses SET state = ?3, epoch = epoch + ?4 WHERE id = ?1 AND state = ?2");
  q.bind(1, id).bind(2, static_cast<int>(from)).bind(3, static_cast<int>(to)).bind(4, new_epoch ? 1 : 0);
  q.run();
  const bool moved = db_.changes() == 1;
  if (moved) db_.wrote();
  return moved;
}

std::optional<BusinessRow> SqliteStore::business(BusinessId id) {
  Statement& q = db_.prepared(business_,
                              "SELECT id, name, state, quota, epoch, senders, templates FROM businesses WHERE id = ?1");
  ResetOnExit guard(q);
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  BusinessRow row;
  row.id = static_cast<BusinessId>(q.i64(0));
  q.text(1, row.name);
  row.state = static_cast<GrantState>(q.i64(2));
  row.quota = static_cast<std::uint64_t>(q.i64(3));
  row.epoch = static_cast<std::uint64_t>(q.i64(4));
  std::string text;
  q.text(5, text);
  row.senders = nlohmann::json::parse(text).get<std::vector<std::string>>();
  q.text(6, text);
  row.templates = nlohmann::json::parse(text).get<std::vector<std::uint32_t>>();
  return row;
}

std::uint64_t SqliteStore::quota_used(BusinessId id, std::uint32_t period) {
  Statement& q = db_.prepared(used_, "SELECT used FROM quota_used WHERE business = ?1 AND period = ?2");
  ResetOnExit guard(q);
  q.bind(1, id).bind(2, period);
  return q.step() ? static_cast<std::uint64_t>(q.i64(0)) : 0;
}

std::optional<MessageRow> SqliteStore::get(MessageId id) {
  Statement& q = db_.prepared(get_, select_row("id = ?1").c_str());
  ResetOnExit guard(q);
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  MessageRow row;
  read_row(q, row);
  return row;
}

std::optional<MessageId> SqliteStore::find(BusinessId business, std::string_view biz_type, std::string_view biz_id) {
  const std::optional<ExistingMessage> f = find_key(business, biz_type, biz_id);
  if (!f) return std::nullopt;
  return f->id;
}

std::vector<StatusChange> SqliteStore::history(MessageId id) {
  Statement& q = db_.prepared(history_,
      "SELECT json_extract(h.value, '$[0]'), json_extract(h.value, '$[1]'), json_extract(h.value, '$[2]'),"
      " json_extract(h.value, '$[3]'), json_extract(h.value, '$[4]')"
      " FROM messages AS m, json_each('[' || m.history || ']') AS h WHERE m.id = ?1 ORDER BY h.key");
  ResetOnExit guard(q);
  q.bind(1, id);
  std::vector<StatusChange> out;
  while (q.step()) {
    out.push_back({q.time(0), static_cast<Status>(q.i64(1)), static_cast<Reason>(q.i64(2)),
                   static_cast<ProviderId>(q.i64(3)), static_cast<PodId>(q.i64(4))});
  }
  return out;
}

std::vector<MessageId> SqliteStore::messages(const MessageQuery& query) {
  Statement& q = db_.prepared(messages_,
      "SELECT id FROM messages WHERE business = ?1 AND created_at >= ?2 AND created_at < ?3"
      " AND (?4 < 0 OR status = ?4) ORDER BY id LIMIT ?5");
  ResetOnExit guard(q);
  q.bind(1, query.business).bind(2, query.from).bind(3, query.to)
      .bind(4, query.status ? static_cast<int>(*query.status) : -1)
      .bind(5, static_cast<std::int64_t>(std::min<std::size_t>(query.limit, INT64_MAX)));
  std::vector<MessageId> out;
  while (q.step()) out.push_back(static_cast<MessageId>(q.i64(0)));
  return out;
}

void SqliteStore::read_campaign(Statement& s, CampaignRow& out) {
  out.id = static_cast<CampaignId>(s.i64(0));
  out.business = static_cast<BusinessId>(s.i64(1));
  out.epoch = static_cast<std::uint64_t>(s.i64(2));
  s.text(3, out.biz_type);
  s.text(4, out.biz_id);
  s.text(5, out.filter);
  out.template_id = static_cast<std::uint32_t>(s.i64(6));
  out.content = static_cast<std::uint64_t>(s.i64(7));
  out.segments = static_cast<std::uint16_t>(s.i64(8));
  out.created_at = s.time(9);
  out.send_at = s.time(10);
  out.cursor = static_cast<std::uint64_t>(s.i64(11));
  out.messages = static_cast<std::uint64_t>(s.i64(12));
  out.skipped = static_cast<std::uint64_t>(s.i64(13));
  out.state = static_cast<CampaignState>(s.i64(14));
  out.stopped_by = static_cast<AcceptOutcome>(s.i64(15));
  out.claim_token = static_cast<ClaimToken>(s.i64(16));
  out.owner = static_cast<PodId>(s.i64(17));
  out.due_at = s.time(18);
}

CampaignStart SqliteStore::start_campaign(const NewCampaign& c) {
  Db::Transaction tx(db_);
  const std::optional<BusinessRow> biz = business(c.business);
  std::optional<CampaignRow> existing;
  {
    Statement& q = db_.prepared(find_campaign_, (std::string("SELECT ") + kCampaignColumns +
                                                 " FROM campaigns WHERE business = ?1 AND biz_type = ?2 AND biz_id = ?3").c_str());
    ResetOnExit guard(q);
    q.bind(1, c.business).bind(2, c.biz_type).bind(3, c.biz_id);
    if (q.step()) read_campaign(q, existing.emplace());
  }
  CampaignStart start = judge_campaign(c, biz ? &*biz : nullptr, existing ? &*existing : nullptr);
  if (start.outcome != AcceptOutcome::accepted) return start;
  Statement& q = db_.prepared(insert_campaign_,
      "INSERT INTO campaigns (business, epoch, biz_type, biz_id, filter, template_id, content, segments, created_at,"
      " send_at, due_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?9) RETURNING id");
  {
    ResetOnExit guard(q);
    q.bind(1, c.business).bind(2, c.epoch).bind(3, c.biz_type).bind(4, c.biz_id).bind(5, c.filter)
        .bind(6, c.template_id).bind(7, c.content).bind(8, static_cast<int>(c.segments)).bind(9, c.now).bind(10, c.send_at);
    RELAYSIM_ASSERT(q.step(), "an insert returns its id");
    start.id = static_cast<CampaignId>(q.i64(0));
  }
  tx.commit();
  db_.wrote();
  return start;
}

bool SqliteStore::claim_campaign(Time now, PodId pod, Duration lease, CampaignRow& out) {
  RELAYSIM_ASSERT(pod != 0, "a campaign is claimed by a pod (0 means none)");
  RELAYSIM_ASSERT(lease > Duration::zero(), "a campaign's claim lasts longer than zero");
  if (const std::optional<Time> next = next_campaign_due(); !next || *next > now) return false;
  Db::Transaction tx(db_);
  const ClaimToken token = take_token();
  Statement& q = db_.prepared(claim_campaign_,
      (std::string("UPDATE campaigns SET claim_token = ?2, owner = ?3, due_at = ?4 WHERE id = (SELECT id FROM campaigns"
                   " WHERE state = 0 AND due_at <= ?1 ORDER BY id LIMIT 1) RETURNING ") + kCampaignColumns).c_str());
  {
    ResetOnExit guard(q);
    q.bind(1, now).bind(2, token).bind(3, pod).bind(4, now + lease);
    if (!q.step()) return false;
    read_campaign(q, out);
  }
  tx.commit();
  db_.wrote();
  return true;
}

bool SqliteStore::advance_campaign(CampaignId id, ClaimToken token, const CampaignProgress& p) {
  Statement& q = db_.prepared(advance_campaign_,
      "UPDATE campaigns SET cursor = ?3, messages = messages + ?4, skipped = skipped + ?5, state = ?6, stopped_by = ?7,"
      " due_at = ?8 WHERE id = ?1 AND claim_token = ?2 AND state = 0");
  q.bind(1, id).bind(2, token).bind(3, p.cursor).bind(4, p.messages).bind(5, p.skipped)
      .bind(6, static_cast<int>(p.state)).bind(7, static_cast<int>(p.stopped_by))
      .bind(8, p.state == CampaignState::expanding ? p.due_at : Time{});
  q.run();
  const bool applied = db_.changes() == 1;
  db_.wrote();
  return applied;
}

std::optional<Time> SqliteStore::next_campaign_due() {
  Statement& q = db_.prepared(next_campaign_, "SELECT MIN(due_at) FROM campaigns WHERE state = 0");
  ResetOnExit guard(q);
  if (!q.step() || q.is_null(0)) return std::nullopt;
  return q.time(0);
}

std::optional<CampaignRow> SqliteStore::campaign(CampaignId id) {
  Statement& q = db_.prepared(get_campaign_, (std::string("SELECT ") + kCampaignColumns + " FROM campaigns WHERE id = ?1").c_str());
  ResetOnExit guard(q);
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  CampaignRow row;
  read_campaign(q, row);
  return row;
}

bool SqliteStore::take_cap(Recipient recipient, MessageId id, Time now, const FrequencyCap& cap) {
  if (cap.count == 0) return true;
  RELAYSIM_ASSERT(cap.per > Duration::zero(), "a frequency cap's window is longer than zero");
  RELAYSIM_ASSERT(id != 0, "a place in the cap is held by a message");
  Db::Transaction tx(db_);
  std::int64_t held = 0;
  bool mine = false;
  {
    Statement& q = db_.prepared(cap_count_,
        "SELECT COUNT(*), COALESCE(MAX(message = ?2), 0) FROM cap_places WHERE recipient = ?1 AND at > ?3");
    ResetOnExit guard(q);
    q.bind(1, recipient).bind(2, id).bind(3, now - cap.per);
    RELAYSIM_ASSERT(q.step(), "a count has a row");
    held = q.i64(0);
    mine = q.i64(1) != 0;
  }
  if (mine || cap_full(static_cast<std::uint64_t>(held), cap.count)) {
    tx.commit();
    return mine;
  }
  Statement& q = db_.prepared(cap_take_, "INSERT INTO cap_places (recipient, message, at) VALUES (?1, ?2, ?3)");
  q.bind(1, recipient).bind(2, id).bind(3, now);
  q.run();
  tx.commit();
  db_.wrote();
  return true;
}

std::vector<CapPlaceRow> SqliteStore::cap_places() {
  Statement& q = db_.prepared(cap_list_, "SELECT recipient, message, at FROM cap_places ORDER BY recipient, at, message");
  ResetOnExit guard(q);
  std::vector<CapPlaceRow> out;
  while (q.step()) out.push_back({static_cast<Recipient>(q.i64(0)), static_cast<MessageId>(q.i64(1)), q.time(2)});
  return out;
}

StoreCounts SqliteStore::counts() {
  StoreCounts c;
  {
    Statement& q = db_.prepared(count_status_, "SELECT status, COUNT(*) FROM messages GROUP BY status");
    ResetOnExit guard(q);
    while (q.step()) {
      const auto s = q.i64(0);
      if (s >= 0 && s < kStatusCount) c.by_status[static_cast<std::size_t>(s)] = static_cast<std::uint64_t>(q.i64(1));
    }
  }
  {
    Statement& q = db_.prepared(count_reason_, "SELECT reason, COUNT(*) FROM messages WHERE status >= 4 GROUP BY reason");
    ResetOnExit guard(q);
    while (q.step()) {
      const auto r = q.i64(0);
      if (r >= 0 && r < kReasonCount) c.by_reason[static_cast<std::size_t>(r)] = static_cast<std::uint64_t>(q.i64(1));
    }
  }
  Statement& q = db_.prepared(count_charged_, "SELECT COALESCE(SUM(used), 0) FROM quota_used");
  ResetOnExit guard(q);
  if (q.step()) c.charged = static_cast<std::uint64_t>(q.i64(0));
  return c;
}

}  // namespace relaysim::sms
