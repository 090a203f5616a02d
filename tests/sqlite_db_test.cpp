// The SQLite wrapper every store is built on: transactions that span tables are all or nothing,
// nested ones are savepoints, and an injected failure in the middle of one leaves nothing behind.
#include <gtest/gtest.h>

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>
#include <optional>

#include "model/store/sqlite_db.h"

namespace relaysim {
namespace {

// An outbox-shaped pair of tables: a business row and the outbox row that must go with it.
struct TwoTables : ::testing::TestWithParam<Durability> {
  Db db{":memory:", GetParam()};
  TwoTables() {
    db.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL);"
            "CREATE TABLE outbox (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL UNIQUE)");
  }
  void place(std::int64_t id, std::int64_t amount) {
    Db::Statement order(db, "INSERT INTO orders (id, amount) VALUES (?1, ?2)");
    Db::Statement outbox(db, "INSERT INTO outbox (order_id) VALUES (?1)");
    order.bind(1, id).bind(2, amount).run();
    outbox.bind(1, id).run();
  }
  std::int64_t count(const char* table) {
    Db::Statement q(db, (std::string("SELECT COUNT(*) FROM ") + table).c_str());
    q.step();
    const std::int64_t n = q.i64(0);
    q.reset();
    return n;
  }
};

struct FailNthWrite final : FailPoint {
  int writes_left;
  StoreFailure failure;
  FailNthWrite(int n, StoreFailure f) : writes_left(n), failure(f) {}
  std::optional<StoreFailure> before_step(bool writes) override {
    if (writes && --writes_left == 0) return failure;
    return std::nullopt;
  }
};

TEST_P(TwoTables, ATransactionAcrossTablesCommitsBoth) {
  {
    Db::Transaction tx(db);
    place(1, 100);
    tx.commit();
  }
  EXPECT_EQ(count("orders"), 1);
  EXPECT_EQ(count("outbox"), 1);
}

TEST_P(TwoTables, ATransactionLeftWithoutCommitLeavesNeitherTable) {
  try {
    Db::Transaction tx(db);
    place(1, 100);
    throw std::runtime_error("the process dies here");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(count("orders"), 0);
  EXPECT_EQ(count("outbox"), 0);
}

TEST_P(TwoTables, AFailureInjectedBetweenTheTwoWritesRollsBackTheFirst) {
  FailNthWrite second(2, StoreFailure::full);
  db.set_fail_point(&second);
  try {
    Db::Transaction tx(db);
    place(1, 100);
    tx.commit();
    FAIL() << "the second write was to fail";
  } catch (const StoreError& e) {
    EXPECT_EQ(e.failure(), StoreFailure::full);
  }
  db.set_fail_point(nullptr);
  EXPECT_EQ(count("orders"), 0);
  EXPECT_EQ(count("outbox"), 0);
  // The connection goes on working.
  Db::Transaction tx(db);
  place(2, 5);
  tx.commit();
  EXPECT_EQ(count("orders"), 1);
}

TEST_P(TwoTables, ANestedTransactionIsASavepointRolledBackAlone) {
  Db::Transaction outer(db);
  place(1, 100);
  try {
    Db::Transaction inner(db);
    place(2, 200);
    throw std::runtime_error("only the inner work fails");
  } catch (const std::runtime_error&) {
  }
  outer.commit();
  EXPECT_EQ(count("orders"), 1);
  EXPECT_EQ(count("outbox"), 1);
}

INSTANTIATE_TEST_SUITE_P(Durabilities, TwoTables, ::testing::Values(Durability::normal, Durability::off),
                         [](const auto& p) { return p.param == Durability::off ? std::string("batched") : std::string("normal"); });

// A batching connection is the database's only writer, so a read may be remembered until the
// mark moves: it moves with every changed row and every committed batch, and not otherwise. A
// connection that commits as it goes has no mark: another connection may write at any time.
TEST(Db, TheSoleWriterMarkMovesWithEveryChangeAndEveryBatch) {
  Db normal(":memory:", Durability::normal);
  EXPECT_FALSE(normal.sole_writer_mark().has_value());

  Db db(":memory:", Durability::off);
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)");
  const std::optional<Db::WriteMark> start = db.sole_writer_mark();
  ASSERT_TRUE(start.has_value());
  Db::Statement read(db, "SELECT COUNT(*) FROM t");
  read.step();
  read.reset();
  EXPECT_EQ(db.sole_writer_mark(), start) << "a read moves nothing";
  Db::Statement none(db, "UPDATE t SET v = 1 WHERE id = 99");
  none.run();
  EXPECT_EQ(db.sole_writer_mark(), start) << "an update of no row changes nothing";
  Db::Statement insert(db, "INSERT INTO t (v) VALUES (1)");
  insert.run();
  const std::optional<Db::WriteMark> changed = db.sole_writer_mark();
  EXPECT_NE(changed, start);
  db.flush();
  EXPECT_NE(db.sole_writer_mark(), changed) << "between batches another connection could write";
}

// Group commit: writes join one transaction until commit_group(); what waits for them runs
// after the commit, in order; a read alone opens nothing.
struct Grouped : ::testing::Test {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("relaysim-grouped-" + std::to_string(::getpid()) + ".db");
  std::unique_ptr<Db> db;
  int opened = 0;
  void SetUp() override {
    std::filesystem::remove(path);
    db = std::make_unique<Db>(path.string(), Durability::full);
    db->exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)");
    db->group_commits([this] { ++opened; });
  }
  void TearDown() override {
    db.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  }
  void insert(int v) {
    Db::Statement s(*db, "INSERT INTO t (v) VALUES (?1)");
    s.bind(1, v).run();
    db->wrote();
  }
  // Rows another connection sees: only what is committed.
  std::int64_t committed_rows() {
    Db other(path.string(), Durability::normal);
    Db::Statement q(other, "SELECT COUNT(*) FROM t");
    q.step();
    const std::int64_t n = q.i64(0);
    q.reset();
    return n;
  }
};

TEST_F(Grouped, AGroupHoldsItsWritesUntilItsCommitAndThenRunsWhatWaitedInOrder) {
  std::vector<std::string> said;
  db->when_committed([&said](bool ok) { said.push_back(ok ? "at once" : "lost"); });
  EXPECT_EQ(said, std::vector<std::string>{"at once"}) << "nothing is open: nothing to wait for";
  {
    Db::Statement read(*db, "SELECT COUNT(*) FROM t");
    read.step();
    read.reset();
  }
  EXPECT_FALSE(db->group_open()) << "a read opens no group";
  insert(1);
  EXPECT_TRUE(db->group_open());
  EXPECT_EQ(opened, 1);
  db->when_committed([&said](bool ok) { said.push_back(ok ? "first" : "lost"); });
  insert(2);
  {
    Db::Transaction tx(*db);
    insert(3);
    tx.commit();
  }
  db->wrote();  // the transaction's own call, as a store makes it after commit()
  db->when_committed([&said](bool ok) { said.push_back(ok ? "second" : "lost"); });
  EXPECT_EQ(opened, 1) << "one group for all";
  EXPECT_EQ(db->group_writes(), 4u);
  EXPECT_EQ(committed_rows(), 0) << "nothing is visible before the commit";
  EXPECT_EQ(said.size(), 1u) << "nothing waiting ran before the commit";
  EXPECT_EQ(db->commit_group(), 4u);
  EXPECT_EQ(committed_rows(), 3);
  EXPECT_EQ(said, (std::vector<std::string>{"at once", "first", "second"}));
  EXPECT_FALSE(db->group_open());
  EXPECT_EQ(db->commit_group(), 0u) << "no group, no commit";
  insert(4);
  EXPECT_EQ(opened, 2) << "the next write opens the next group";
  db->commit_group();
}

TEST_F(Grouped, ATransactionInAGroupIsASavepointRolledBackAlone) {
  insert(1);
  try {
    Db::Transaction tx(*db);
    insert(2);
    throw std::runtime_error("the store call fails here");
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(db->group_open());
  db->commit_group();
  EXPECT_EQ(committed_rows(), 1);
}

TEST_F(Grouped, AGroupSqliteRolledBackIsReportedLostAndItsCommitThrows) {
  insert(1);
  std::vector<bool> said;
  db->when_committed([&said](bool ok) { said.push_back(ok); });
  // What SQLite does to the open transaction on some disk-full and I/O errors.
  ASSERT_EQ(sqlite3_exec(db->handle(), "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  // Nothing joins a lost group: a write now would commit alone, outside it.
  EXPECT_THROW(insert(2), StoreError);
  EXPECT_THROW(Db::Transaction tx(*db), StoreError);
  try {
    db->commit_group();
    FAIL() << "a lost group must not pass for committed";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("1 writes are lost"), std::string::npos) << e.what();
  }
  EXPECT_EQ(said, std::vector<bool>{false});
  EXPECT_EQ(committed_rows(), 0);
}

TEST(Db, FailuresSayWhatKindTheyAre) {
  Db db(":memory:", Durability::normal);
  try {
    db.exec("SELECT * FROM no_such_table");
    FAIL();
  } catch (const StoreError& e) {
    EXPECT_EQ(e.failure(), StoreFailure::other);
    EXPECT_NE(std::string(e.what()).find("no such table"), std::string::npos);
  }
}

TEST(Db, InspectionTellsAnEmptyDatabaseFromAForeignOneAndFromOtherFiles) {
  const std::string dir = ::testing::TempDir() + "relaysim-inspect";
  std::filesystem::create_directories(dir);
  const std::string db_path = dir + "/a.db";
  std::filesystem::remove(db_path);
  EXPECT_FALSE(inspect_database(db_path).exists);
  {
    Db db(db_path, Durability::normal);
    db.exec("CREATE TABLE accounts (id INTEGER)");
  }
  const DbInspection d = inspect_database(db_path);
  EXPECT_TRUE(d.is_sqlite);
  EXPECT_EQ(d.tables, std::vector<std::string>{"accounts"});
  EXPECT_TRUE(inspect_database(dir).is_directory);
  const std::string text = dir + "/text.db";
  std::FILE* f = std::fopen(text.c_str(), "w");
  std::fputs("not a database, just text that is long enough to have a header\n", f);
  std::fclose(f);
  EXPECT_FALSE(inspect_database(text).is_sqlite);
}

}  // namespace
}  // namespace relaysim
