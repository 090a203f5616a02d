#include "model/store/sqlite_db.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include "model/core/assert.h"

namespace relaysim {

namespace {
StoreFailure failure_of(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return StoreFailure::busy;
    case SQLITE_FULL: return StoreFailure::full;
    case SQLITE_IOERR: return StoreFailure::io;
    default: return StoreFailure::other;
  }
}
}  // namespace

// ---- Statement --------------------------------------------------------------------------------

Db::Statement::Statement(Db& db, const char* sql, bool control) : db_(db), control_(control) {
  const int rc = sqlite3_prepare_v3(db.db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, "prepare");
  writes_ = sqlite3_stmt_readonly(stmt_) == 0;
}

Db::Statement::~Statement() { sqlite3_finalize(stmt_); }

Db::Statement& Db::Statement::bind(int i, std::int64_t v) {
  RELAYSIM_ASSERT(i >= 1, "SQLite numbers a statement's parameters from 1");
  if (const int rc = sqlite3_bind_int64(stmt_, i, v); rc != SQLITE_OK) db_.fail(rc, "bind");
  return *this;
}

Db::Statement& Db::Statement::bind(int i, std::string_view s) {
  RELAYSIM_ASSERT(i >= 1, "SQLite numbers a statement's parameters from 1");
  if (const int rc = sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_STATIC);
      rc != SQLITE_OK) {
    db_.fail(rc, "bind");
  }
  return *this;
}

bool Db::Statement::step() {
  if (writes_ && !control_ && db_.grouping_) db_.join_group();
  if (!control_ && db_.fail_point_ != nullptr) {
    if (const std::optional<StoreFailure> f = db_.fail_point_->before_step(writes_)) {
      reset();
      throw StoreError(*f, "SQLite step failed on '" + db_.path_ + "': injected " + std::string(to_string(*f)));
    }
  }
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  reset();
  db_.fail(rc, "step");
}

void Db::Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Db::Statement::run() {
  while (step()) {
  }
  reset();
}

std::int64_t Db::Statement::i64(int col) const {
  RELAYSIM_ASSERT(col >= 0 && col < sqlite3_column_count(stmt_), "a column of the statement's result");
  return sqlite3_column_int64(stmt_, col);
}

bool Db::Statement::is_null(int col) const {
  RELAYSIM_ASSERT(col >= 0 && col < sqlite3_column_count(stmt_), "a column of the statement's result");
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

void Db::Statement::text(int col, std::string& out) const { out.assign(text_view(col)); }

std::string_view Db::Statement::text_view(int col) const {
  RELAYSIM_ASSERT(col >= 0 && col < sqlite3_column_count(stmt_), "a column of the statement's result");
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  return {p == nullptr ? "" : p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))};
}

// ---- Db ---------------------------------------------------------------------------------------

Db::Db(const std::string& path, Durability durability) : path_(path) {
  // SQLite counts every allocation under a global mutex unless told not to, before its first use.
  // Nothing here reads those counts. (Too late once SQLite is initialised; that is harmless.)
  static const bool configured = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
  (void)configured;
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string msg = "cannot open SQLite database '" + path + "': " +
                            (db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory");
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(StoreFailure::other, msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, 5000);
  try {
    if (path != ":memory:") exec("PRAGMA journal_mode=WAL");
    switch (durability) {
      case Durability::full: exec("PRAGMA synchronous=FULL"); break;
      case Durability::normal: exec("PRAGMA synchronous=NORMAL"); break;
      case Durability::off: exec("PRAGMA synchronous=OFF"); break;
    }
    exec("PRAGMA foreign_keys=ON");
    begin_ = std::make_unique<Statement>(*this, "BEGIN IMMEDIATE", true);
    commit_ = std::make_unique<Statement>(*this, "COMMIT", true);
    rollback_ = std::make_unique<Statement>(*this, "ROLLBACK", true);
    savepoint_ = std::make_unique<Statement>(*this, "SAVEPOINT tx", true);
    release_ = std::make_unique<Statement>(*this, "RELEASE tx", true);
    rollback_to_ = std::make_unique<Statement>(*this, "ROLLBACK TO tx", true);
    batched_ = durability == Durability::off;
    if (batched_) begin_->run();
  } catch (...) {
    // close_v2 waits for statements already prepared to be finalized by their destructors.
    sqlite3_close_v2(db_);
    throw;
  }
}

// The statements are finalized by their destructors after this body runs; close_v2 defers the
// actual close until then.
Db::~Db() {
  // A group still open commits (no one waits for it any more: its process is ending).
  if ((batched_ || group_open_) && sqlite3_get_autocommit(db_) == 0) {
    sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);  // no throwing from here
  }
  sqlite3_close_v2(db_);
}

void Db::fail(int rc, const char* what) {
  std::string msg = std::string("SQLite ") + what + " failed on '" + path_ + "': " + sqlite3_errmsg(db_);
  StoreFailure f = failure_of(rc);
  if ((batched_ || group_open_) && sqlite3_get_autocommit(db_) != 0) {
    // SQLite rolled back the whole open batch or group (it does so on some I/O and disk-full
    // errors): writes already reported as done are gone. Nothing can continue on this connection.
    f = StoreFailure::other;
    msg += batched_ ? " (the open batch of writes was rolled back; this database cannot continue)"
                    : " (the open group of writes was rolled back; this database cannot continue)";
  }
  throw StoreError(f, msg);
}

void Db::exec(const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    const std::string msg = std::string("SQLite failed on '") + path_ + "': " + (err != nullptr ? err : "?");
    sqlite3_free(err);
    throw StoreError(failure_of(rc), msg);
  }
}

Db::Statement& Db::prepared(std::unique_ptr<Statement>& slot, const char* sql) {
  if (!slot) slot = std::make_unique<Statement>(*this, sql);
  return *slot;
}

std::int64_t Db::changes() const { return sqlite3_changes64(db_); }

std::int64_t Db::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

std::optional<Db::WriteMark> Db::sole_writer_mark() const {
  if (!batched_) return std::nullopt;
  return WriteMark{sqlite3_total_changes64(db_), batches_};
}

void Db::wrote() {
  if (group_open_) {
    ++group_writes_;
    return;
  }
  if (!batched_ || depth_ != 0 || ++writes_ < kBatchWrites) return;
  flush();
}

void Db::flush() {
  if (!batched_ || depth_ != 0) return;
  writes_ = 0;
  ++batches_;
  commit_->run();
  begin_->run();
}

// ---- Group commit -----------------------------------------------------------------------------

void Db::group_commits(std::function<void()> opened) {
  RELAYSIM_ASSERT(!batched_, "a batching connection (Durability::off) commits in batches, not groups");
  RELAYSIM_ASSERT(depth_ == 0 && !grouping_, "group commits start once, outside any transaction");
  grouping_ = true;
  group_opened_ = std::move(opened);
}

void Db::open_group() {
  RELAYSIM_ASSERT(grouping_ && !group_open_ && depth_ == 0, "a group opens before the first write of it");
  begin_->run();  // busy: another process writes; the write that asked fails as busy, no group opens
  group_open_ = true;
  group_writes_ = 0;
  if (group_opened_) group_opened_();
}

void Db::join_group() {
  RELAYSIM_ASSERT(grouping_, "only a grouping connection has groups to join");
  if (!group_open_) {
    open_group();
  } else if (sqlite3_get_autocommit(db_) != 0) {
    // SQLite rolled the group back after a failed write (a full disk, an I/O error): a write now
    // would commit on its own, and be reported lost with the rest at the group's commit.
    throw StoreError(StoreFailure::other, "the open group of writes on '" + path_ +
                                              "' was rolled back after a failed write; nothing can join it");
  }
}

void Db::when_committed(std::function<void(bool committed)> then) {
  RELAYSIM_ASSERT(static_cast<bool>(then), "something waits for the commit");
  if (!group_open_) {
    then(true);
    return;
  }
  waiting_.push_back(std::move(then));
}

std::uint32_t Db::commit_group() {
  if (!group_open_) return 0;
  RELAYSIM_ASSERT(depth_ == 0, "a group commits between transactions, not inside one");
  const std::uint32_t writes = group_writes_;
  std::vector<std::function<void(bool)>> waiting;
  waiting.swap(waiting_);
  std::string problem;
  bool committed = false;
  if (sqlite3_get_autocommit(db_) != 0) {
    problem = "SQLite had rolled the group back after a failed write";
  } else {
    try {
      commit_->run();
      committed = true;
    } catch (const StoreError& e) {
      problem = e.what();
    }
    if (!committed && sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  group_open_ = false;
  group_writes_ = 0;
  // Those waiting may write again (a delivery's claim, say): a new group then opens.
  for (std::function<void(bool)>& then : waiting) then(committed);
  if (!committed) {
    throw StoreError(StoreFailure::other, "a group commit on '" + path_ + "' failed (" + problem + "): its " +
                                              std::to_string(writes) + " writes are lost");
  }
  return writes;
}

// ---- Transaction ------------------------------------------------------------------------------

Db::Transaction::Transaction(Db& db) : db_(db) {
  if (db.grouping_) db.join_group();
  savepoint_ = db.batched_ || db.group_open_ || db.depth_ > 0;
  (savepoint_ ? db_.savepoint_ : db_.begin_)->run();
  ++db_.depth_;
}

void Db::Transaction::commit() {
  RELAYSIM_ASSERT(!done_, "a transaction commits once");
  RELAYSIM_ASSERT(db_.depth_ > 0, "an open transaction is counted");
  (savepoint_ ? db_.release_ : db_.commit_)->run();
  done_ = true;
  --db_.depth_;
}

Db::Transaction::~Transaction() {
  if (done_) return;
  RELAYSIM_ASSERT(db_.depth_ > 0, "an open transaction is counted");
  --db_.depth_;
  // Errors here are ignored: SQLite may already have rolled back on the error that brought us
  // here, and a destructor must not throw.
  if (savepoint_) {
    sqlite3_exec(db_.db_, "ROLLBACK TO tx; RELEASE tx", nullptr, nullptr, nullptr);
  } else {
    sqlite3_exec(db_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

// ---- inspection -------------------------------------------------------------------------------

DbInspection inspect_database(const std::string& path) {
  DbInspection out;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return out;
  out.exists = true;
  if (S_ISDIR(st.st_mode)) {
    out.is_directory = true;
    out.error = "is a directory";
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.error = "is not a regular file";
    return out;
  }
  if (st.st_size == 0) {  // an empty file is an empty database
    out.is_sqlite = true;
    return out;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    out.error = db != nullptr ? sqlite3_errmsg(db) : "cannot open it";
    sqlite3_close(db);
    return out;
  }
  sqlite3_stmt* q = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
                         -1, &q, nullptr) != SQLITE_OK) {
    out.error = sqlite3_errmsg(db);  // "file is not a database"
    sqlite3_close(db);
    return out;
  }
  int rc;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    out.tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)));
  }
  if (rc != SQLITE_DONE) {
    out.error = sqlite3_errmsg(db);
  } else {
    out.is_sqlite = true;
  }
  sqlite3_finalize(q);
  // Each table's columns, in order (read-only, as everything here).
  for (const std::string& t : out.tables) {
    std::vector<std::string>& cols = out.columns[t];
    sqlite3_stmt* c = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)", -1, &c, nullptr) != SQLITE_OK) continue;
    sqlite3_bind_text(c, 1, t.c_str(), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(c) == SQLITE_ROW) cols.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(c, 0)));
    sqlite3_finalize(c);
  }
  sqlite3_close(db);
  return out;
}

}  // namespace relaysim
