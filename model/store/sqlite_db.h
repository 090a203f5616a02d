// Db: one SQLite connection, with the few things every relaysim store needs from it — prepared
// statements that are reused, transactions that span tables, savepoints, and a fault hook.
//
// Promises:
//  - A Transaction is all or nothing: its statements commit together, or (on an error, an
//    exception, or a scope left without commit()) none of them is visible. Transactions nest; an
//    inner one is a savepoint, rolled back alone.
//  - Every failure is a StoreError naming the database and what failed, with its kind (busy,
//    full, I/O, other), so a caller can tell "try again later" from "the disk is full".
//  - With Durability::off the connection runs one long transaction, committed every kBatchWrites
//    writes (a statement-sized transaction costs more than the statement); a Transaction inside
//    it is a savepoint. That is for simulations, where the process is the whole world.
//  - With group commits (group_commits(), for the live shells), the first write outside a
//    transaction opens one that every write joins until commit_group(): one commit, and with
//    Durability::full one fsync, covers them all. Whatever must not happen before a write is
//    durable — an acknowledgement, a delivery, a log line — waits in when_committed().
//  - A FailPoint, when installed, is asked before every statement step; the failure it names is
//    raised exactly as SQLite would raise it. The simulator injects busy databases, full disks and
//    crashes in the middle of a transaction this way, into the real code paths.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/time.h"
#include "model/store/store_error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace relaysim {

// How hard commits push to disk. `full` survives power loss; `normal` (WAL) survives a process
// crash; `off` is for simulations (see above): a crash of the process loses the last batch.
enum class Durability : std::uint8_t { full, normal, off };

// Asked before each statement step; returns the failure to raise, if any.
class FailPoint {
 public:
  virtual ~FailPoint() = default;
  virtual std::optional<StoreFailure> before_step(bool writes) = 0;
};

class Db {
 public:
  class Statement;

  // `path` may be ":memory:". Throws StoreError.
  Db(const std::string& path, Durability durability);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }

  // Runs SQL that returns no rows (schema, pragmas). Throws StoreError.
  void exec(const char* sql);
  // The statement in `slot`, prepared on first use and kept.
  Statement& prepared(std::unique_ptr<Statement>& slot, const char* sql);
  // Rows changed by the last INSERT, UPDATE or DELETE.
  std::int64_t changes() const;
  // The rowid of the last row inserted on this connection. (Cheaper than INSERT ... RETURNING, which
  // costs SQLite a temporary table per statement.)
  std::int64_t last_insert_rowid() const;
  // After each write: with Durability::off, commits every kBatchWrites writes.
  void wrote();
  // While this connection is the database's only writer — a batching connection holds the write
  // lock from one batch to the next — a mark that moves whenever it may have changed anything (a
  // row changed, a batch committed); otherwise nullopt: another connection may write at any time.
  // A store remembers a read under its mark and reuses it until the mark moves.
  struct WriteMark {
    std::int64_t changes = -1;
    std::uint64_t batches = 0;
    bool operator==(const WriteMark&) const = default;
  };
  std::optional<WriteMark> sole_writer_mark() const;
  // Commits what a batching connection holds (Durability::off); nothing otherwise.
  void flush();

  // ---- Group commit ----
  // From now on, the first write outside a group opens one (BEGIN IMMEDIATE) that every write
  // joins — a Transaction inside it is a savepoint, rolled back alone — until commit_group().
  // `opened` is called as each group opens: its owner must call commit_group() soon (the live
  // service posts it behind the work already queued on its loop, so that one commit covers every
  // request that loop turn read). The group holds the database's write lock while open.
  // Not with Durability::off, which batches already.
  void group_commits(std::function<void()> opened);
  bool group_open() const { return group_open_; }
  // Writes in the open group (store calls that wrote, as wrote() counts them); 0 when none is open.
  std::uint32_t group_writes() const { return group_writes_; }
  // Runs `then(true)` once every write made so far is committed: at once when no group is open,
  // else right after the group's commit, in the order asked. `then(false)` instead when the group
  // is lost.
  void when_committed(std::function<void(bool committed)> then);
  // Commits the open group and runs what waited for it; returns its writes (0: none was open).
  // When the commit fails, or SQLite had already rolled the group back (a full disk, an I/O
  // error in one of its writes), what waited runs with false and this throws StoreError: writes
  // whose callers were told they succeeded are gone, and whatever the process built on them in
  // memory is wrong. Its owner stops (as a database stops when an fsync fails) and a restart
  // reads the store again.
  std::uint32_t commit_group();

  void set_fail_point(FailPoint* fp) { fail_point_ = fp; }
  // Whether statements run inside a transaction already (an open Transaction, a group, or batching).
  bool in_transaction() const { return batched_ || group_open_ || depth_ > 0; }
  [[noreturn]] void fail(int rc, const char* what);

  static constexpr std::uint32_t kBatchWrites = 4096;

  // All or nothing; see above. Not copyable; one scope, one transaction.
  class Transaction {
   public:
    explicit Transaction(Db& db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

   private:
    Db& db_;
    bool savepoint_ = false;
    bool done_ = false;
  };

 private:
  friend class Statement;
  void open_group();
  // Before a write: opens a group when none is, and refuses the write when SQLite has rolled the
  // open one back (a write then would commit alone, outside it).
  void join_group();

  sqlite3* db_ = nullptr;
  std::string path_;
  bool batched_ = false;
  bool grouping_ = false;  // group_commits() was called
  bool group_open_ = false;
  std::uint32_t group_writes_ = 0;
  std::function<void()> group_opened_;
  std::vector<std::function<void(bool)>> waiting_;  // for the open group's commit
  std::uint32_t writes_ = 0;
  std::uint64_t batches_ = 0;  // batches committed
  int depth_ = 0;  // open Transactions
  FailPoint* fail_point_ = nullptr;
  std::unique_ptr<Statement> begin_, commit_, rollback_, savepoint_, release_, rollback_to_;
};

// A prepared statement, reset after every use so it can be reused without re-preparing.
class Db::Statement {
 public:
  // `control`: BEGIN, COMMIT and the like, which the fail point never fails.
  Statement(Db& db, const char* sql, bool control = false);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, std::int64_t v);
  Statement& bind(int i, std::uint64_t v) { return bind(i, static_cast<std::int64_t>(v)); }
  Statement& bind(int i, std::uint32_t v) { return bind(i, static_cast<std::int64_t>(v)); }
  Statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Statement& bind(int i, Time t) { return bind(i, to_ns(t)); }
  Statement& bind(int i, Duration d) { return bind(i, to_ns(d)); }
  Statement& bind(int i, std::string_view s);
  // True while a row is available; throws StoreError (after a reset) on error.
  bool step();
  void reset();
  // Steps to the end and resets.
  void run();
  std::int64_t i64(int col) const;
  Time time(int col) const { return time_from_ns(i64(col)); }
  bool is_null(int col) const;
  void text(int col, std::string& out) const;
  std::string_view text_view(int col) const;

 private:
  Db& db_;
  sqlite3_stmt* stmt_ = nullptr;
  bool writes_ = false;
  bool control_ = false;
};

// Resets a statement on every path out of a scope, so an exception leaves it reusable.
class ResetOnExit {
 public:
  explicit ResetOnExit(Db::Statement& s) : s_(s) {}
  ~ResetOnExit() { s_.reset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  Db::Statement& s_;
};

// What is in a database file before a run uses it, without changing it.
struct DbInspection {
  bool exists = false;        // a file is at the path
  bool is_directory = false;
  bool is_sqlite = false;     // opens and reads as an SQLite database
  std::vector<std::string> tables;  // user tables, by name
  std::map<std::string, std::vector<std::string>> columns;  // each table's columns, in order
  std::string error;          // why it is not readable, when it is not

  bool has_table(std::string_view name) const {
    return std::find(tables.begin(), tables.end(), name) != tables.end();
  }
  // An SQLite file holding every one of `names`.
  bool holds(std::initializer_list<std::string_view> names) const {
    return exists && !is_directory && is_sqlite &&
           std::all_of(names.begin(), names.end(), [this](std::string_view n) { return has_table(n); });
  }
};
DbInspection inspect_database(const std::string& path);

}  // namespace relaysim
