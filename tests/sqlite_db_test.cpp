// The SQLite wrapper every store is built on: transactions that span tables are all or nothing,
// nested ones are savepoints, and an injected failure in the middle of one leaves nothing behind.
#include <gtest/gtest.h>

#include <filesystem>
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
