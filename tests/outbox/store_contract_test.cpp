// The outbox Store contract (model/outbox/store.h), run against every implementation — the memory
// and SQLite stores, and PostgreSQL's (live/outbox/pg_store.h) on a server the test starts
// itself; then the SQLite store's all-or-nothing calls under injected failures, and differential
// runs that hold the memory store and SQLite's, and the memory store and PostgreSQL's, to the same
// answers for thousands of random calls.
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include <libpq-fe.h>

#include "live/outbox/pg_store.h"
#include "model/core/random.h"
#include "model/outbox/memory_store.h"
#include "model/outbox/sqlite_store.h"
#include "tests/live/pg_server.h"

namespace relaysim {
// Times as nanoseconds and durabilities by name, rather than bytes. (Static: found by
// argument-dependent lookup, and private to this file.)
[[maybe_unused]] static void PrintTo(Time t, std::ostream* os) { *os << to_ns(t) << " ns"; }
[[maybe_unused]] static void PrintTo(Durability d, std::ostream* os) {
  *os << (d == Durability::full ? "full" : d == Durability::normal ? "normal" : "off");
}
}  // namespace relaysim

namespace relaysim::outbox {

// Readable failures. (Static: found by argument-dependent lookup, and private to this file.)
[[maybe_unused]] static void PrintTo(const Message& m, std::ostream* os) {
  *os << "{id " << m.id << ", type " << m.type << ", key " << m.key << ", bucket " << m.bucket << ", version "
      << m.version << ", " << to_string(m.status) << ", " << to_string(m.reason) << ", attempt " << m.attempt
      << ", created " << to_ns(m.created_at) << ", next " << to_ns(m.next_attempt) << ", fence " << m.fence << "}";
}
[[maybe_unused]] static void PrintTo(Relock r, std::ostream* os) { *os << to_string(r); }

namespace {

using std::chrono::seconds;

struct StoreFactory {
  const char* name;
  std::function<std::unique_ptr<Store>()> make;
  bool reuses_ids = true;  // a rolled-back operation's ids are handed out again (the contract allows either)
};

// A PostgreSQL store on the test's own server, started at the first store asked of it; each store
// gets a schema of its own, so that each test starts on an empty database.
std::unique_ptr<Store> postgres_store() {
  static testing_pg::PgServer server;
  static const std::string problem = [] {
    std::string why;
    return server.start(why) ? std::string() : why;
  }();
  if (!problem.empty()) throw std::runtime_error("the test's PostgreSQL: " + problem);
  static int schemas = 0;
  const std::string schema = "contract_" + std::to_string(++schemas);
  PGconn* c = PQconnectdb(server.conninfo("postgres").c_str());
  PGresult* r = PQexec(c, ("CREATE SCHEMA " + schema).c_str());
  const bool made = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  PQfinish(c);
  if (!made) throw std::runtime_error("the test's PostgreSQL: cannot create schema " + schema);
  return std::make_unique<live::outbox::PgStore>(server.conninfo("postgres") + " options='-c search_path=" + schema + "'");
}

void PrintTo(const StoreFactory& f, std::ostream* os) { *os << f.name; }

constexpr Duration kTimeout = seconds(30);

std::vector<RowId> ids(const std::vector<Message>& ms) {
  std::vector<RowId> out;
  for (const Message& m : ms) out.push_back(m.id);
  return out;
}

class OutboxStoreContract : public ::testing::TestWithParam<StoreFactory> {
 protected:
  std::unique_ptr<Store> store = GetParam().make();
  Time t0 = Time{} + seconds(100);

  // One committed business operation: the entity written, one message about it.
  RowId add(EntityKey key, Time at, std::uint32_t type = 0) {
    Operation op(*store, at);
    const std::uint64_t version = op->write_entity(key);
    const RowId id = op->add({type, key, static_cast<std::uint32_t>(key % 8), version});
    op.commit();
    return id;
  }
  std::vector<Message> scan(FenceToken token, Time now, std::uint32_t limit = 100, Ordering ordering = Ordering::none,
                            bool mark = false, std::optional<Time> due_by = std::nullopt) {
    const Scan s{.token = token, .now = now, .due_by = due_by.value_or(now), .limit = limit, .ordering = ordering,
                 .mark = mark, .processing_timeout = kTimeout};
    std::vector<Message> out;
    EXPECT_TRUE(store->scan(s, out)) << "a scan under token " << token;
    return out;
  }
  // Scans and marks everything due now (mark_then_publish).
  std::vector<Message> take(FenceToken token, Time now, Ordering ordering = Ordering::none, std::uint32_t limit = 100) {
    return scan(token, now, limit, ordering, true);
  }
  std::optional<std::uint32_t> rescue(FenceToken token, Time now, std::vector<Message>& out, std::uint32_t limit = 100,
                                      std::vector<std::uint16_t> max_attempts = {}, std::optional<Time> overdue_by = {}) {
    return store->rescue(token, now, overdue_by.value_or(now), limit, max_attempts, out);
  }
  static Finish done(Status s, Reason why = Reason::none, Time next = {}) { return Finish{s, why, next, next}; }
  std::uint64_t in(Status s) { return store->counts().by_status[static_cast<std::size_t>(s)]; }
};

TEST_P(OutboxStoreContract, ACommittedOperationIsVisibleWithIdsFromOne) {
  EXPECT_FALSE(store->get(1));
  store->begin(t0);
  EXPECT_EQ(store->write_entity(7), 1u);
  EXPECT_EQ(store->add({2, 7, 3, 1}), 1u);
  EXPECT_EQ(store->write_entity(7), 2u) << "each write raises the entity's version";
  EXPECT_EQ(store->add({1, 7, 3, 2}), 2u);
  EXPECT_EQ(store->write_entity(9), 1u);
  EXPECT_EQ(store->add({0, 9, 1, 1}), 3u);
  store->commit();

  const Message first{1, 2, 7, 3, 1, Status::pending, Reason::none, 0, t0, t0, 0};
  EXPECT_EQ(store->get(1), first);
  EXPECT_EQ(store->get(2)->version, 2u);
  EXPECT_EQ(store->get(2)->type, 1u);
  EXPECT_EQ(store->get(3)->key, 9u);
  EXPECT_FALSE(store->get(0));
  EXPECT_FALSE(store->get(4));
  EXPECT_EQ(store->entity_version(7), 2u);
  EXPECT_EQ(store->entity_version(9), 1u);
  EXPECT_FALSE(store->entity_version(8));
  EXPECT_EQ(store->counts().messages, 3u);
  EXPECT_EQ(in(Status::pending), 3u);
  EXPECT_EQ(add(7, t0 + seconds(1)), 4u) << "the next operation goes on counting";
  EXPECT_EQ(store->get(4)->version, 3u);
}

TEST_P(OutboxStoreContract, ARolledBackOperationWasNeverThere) {
  ASSERT_EQ(add(1, t0), 1u);
  store->begin(t0 + seconds(1));
  EXPECT_EQ(store->write_entity(1), 2u);
  EXPECT_EQ(store->write_entity(5), 1u);
  EXPECT_EQ(store->add({0, 1, 1, 2}), 2u);
  EXPECT_EQ(store->add({0, 5, 5, 1}), 3u);
  store->rollback();
  EXPECT_FALSE(store->get(2));
  EXPECT_FALSE(store->get(3));
  EXPECT_EQ(store->entity_version(1), 1u) << "the entity's version is undone";
  EXPECT_FALSE(store->entity_version(5)) << "a new entity is gone";
  EXPECT_EQ(store->counts().messages, 1u);
  store->rollback();  // nothing open: nothing happens

  {
    Operation op(*store, t0 + seconds(2));
    EXPECT_EQ(op->write_entity(1), 2u);
    const RowId id = op->add({0, 1, 1, 2});
    if (GetParam().reuses_ids) {
      EXPECT_EQ(id, 2u) << "a rolled-back id is handed out again";
    } else {
      EXPECT_GT(id, 3u) << "ids go on past the rolled-back ones";
    }
  }  // left without commit: rolled back
  EXPECT_FALSE(store->get(2));
  EXPECT_EQ(store->entity_version(1), 1u);
  const RowId again = add(1, t0 + seconds(3));
  EXPECT_EQ(again, GetParam().reuses_ids ? 2u : 5u) << "the next committed id is larger than every id before";
  EXPECT_EQ(store->get(again)->version, 2u);
  EXPECT_EQ(store->get(again)->created_at, t0 + seconds(3));
  EXPECT_EQ(scan(1, t0 + seconds(3)).size(), 2u);
}

TEST_P(OutboxStoreContract, AScanReturnsDuePendingMessagesByNextAttemptThenIdUpToItsLimit) {
  const RowId a = add(1, t0 + seconds(2));
  const RowId b = add(2, t0);
  const RowId c = add(3, t0 + seconds(1));
  const RowId d = add(4, t0);
  const RowId e = add(5, t0 + seconds(9));
  EXPECT_EQ(ids(scan(1, t0 + seconds(2))), (std::vector<RowId>{b, d, c, a}));
  EXPECT_EQ(ids(scan(1, t0 + seconds(2), 2)), (std::vector<RowId>{b, d}));
  EXPECT_TRUE(scan(1, t0 + seconds(2), 0).empty());
  EXPECT_TRUE(scan(1, t0 - seconds(1)).empty()) << "nothing is due before its next_attempt";
  EXPECT_EQ(ids(scan(1, t0, 100, Ordering::none, false, t0 + seconds(9))), (std::vector<RowId>{b, d, c, a, e}))
      << "due_by, not now, says what is due";
  // A scan that does not mark changes nothing: the same scan again returns the same.
  const std::vector<Message> again = scan(1, t0 + seconds(2));
  EXPECT_EQ(ids(again), (std::vector<RowId>{b, d, c, a}));
  for (const Message& m : again) {
    EXPECT_EQ(m.status, Status::pending);
    EXPECT_EQ(m.attempt, 0u);
    EXPECT_EQ(store->get(m.id), m);
  }
  EXPECT_EQ(in(Status::pending), 5u);
}

TEST_P(OutboxStoreContract, APerKeyScanReturnsOnlyEachKeysFirstUnfinishedMessage) {
  constexpr EntityKey kA = 1, kB = 2, kC = 3;
  const RowId a1 = add(kA, t0);
  const RowId b1 = add(kB, t0);
  const RowId a2 = add(kA, t0);
  const RowId b2 = add(kB, t0);
  const RowId c1 = add(kC, t0 + seconds(1));
  const RowId a3 = add(kA, t0);
  const Time now = t0 + seconds(1);
  EXPECT_EQ(ids(scan(1, now, 100, Ordering::none)), (std::vector<RowId>{a1, b1, a2, b2, a3, c1}));
  EXPECT_EQ(ids(scan(1, now, 100, Ordering::per_key)), (std::vector<RowId>{a1, b1, c1}));
  EXPECT_EQ(ids(scan(1, now, 2, Ordering::per_key)), (std::vector<RowId>{a1, b1})) << "the limit counts what is returned";
  EXPECT_EQ(ids(scan(1, now, 3, Ordering::per_key)), (std::vector<RowId>{a1, b1, c1})) << "held messages take no place";

  // A processing head still holds its key.
  const std::vector<Message> taken = take(1, now, Ordering::per_key);
  ASSERT_EQ(ids(taken), (std::vector<RowId>{a1, b1, c1}));
  EXPECT_TRUE(scan(1, now, 100, Ordering::per_key).empty());
  // A head that finishes lets its key's next one go; a head that is retried holds its key.
  ASSERT_TRUE(store->finish(a1, 1, done(Status::handled)));
  ASSERT_TRUE(store->finish(b1, 1, done(Status::pending, Reason::none, now)));
  EXPECT_EQ(ids(scan(1, now, 100, Ordering::per_key)), (std::vector<RowId>{a2, b1}));
  ASSERT_EQ(ids(take(1, now, Ordering::per_key)), (std::vector<RowId>{a2, b1}));
  ASSERT_TRUE(store->finish(b1, 2, done(Status::failed, Reason::rejected)));
  ASSERT_TRUE(store->finish(a2, 1, done(Status::failed, Reason::rejected)));
  EXPECT_EQ(ids(scan(1, now, 100, Ordering::per_key)), (std::vector<RowId>{b2, a3})) << "a failed head is final too";
}

TEST_P(OutboxStoreContract, AKeysLaterMessageFinishingFirstDoesNotFreeItsHead) {
  const RowId d1 = add(4, t0);
  const RowId d2 = add(4, t0);
  const RowId d3 = add(4, t0);
  // Published without ordering (a per_key store never does this; the contract still answers).
  ASSERT_EQ(ids(take(1, t0, Ordering::none)), (std::vector<RowId>{d1, d2, d3}));
  ASSERT_TRUE(store->finish(d2, 1, done(Status::handled)));
  ASSERT_TRUE(store->finish(d3, 1, done(Status::pending, Reason::none, t0)));
  EXPECT_TRUE(scan(1, t0, 100, Ordering::per_key).empty()) << "d1 still holds its key";
  EXPECT_EQ(store->next_due(Ordering::per_key), t0 + kTimeout) << "d1's processing timeout; d3 waits";
  ASSERT_TRUE(store->finish(d1, 1, done(Status::handled)));
  EXPECT_EQ(ids(scan(1, t0, 100, Ordering::per_key)), (std::vector<RowId>{d3}));
  EXPECT_EQ(store->next_due(Ordering::per_key), t0);
}

TEST_P(OutboxStoreContract, AScanWithMarkMarksWhatItReturns) {
  const RowId a = add(1, t0);
  const RowId b = add(2, t0);
  add(3, t0 + seconds(5));
  const Time now = t0 + seconds(1);
  const std::vector<Message> taken = take(4, now);
  ASSERT_EQ(ids(taken), (std::vector<RowId>{a, b}));
  for (const Message& m : taken) {
    EXPECT_EQ(m.status, Status::processing);
    EXPECT_EQ(m.attempt, 1u);
    EXPECT_EQ(m.next_attempt, now + kTimeout);
    EXPECT_EQ(m.fence, 4u);
    EXPECT_EQ(m.created_at, t0);
    EXPECT_EQ(store->get(m.id), m) << "returned as marked";
  }
  EXPECT_TRUE(take(4, now).empty()) << "marked messages are not pending";
  EXPECT_EQ(in(Status::processing), 2u);
  EXPECT_EQ(in(Status::pending), 1u);
  EXPECT_EQ(store->current_fence(), 4u);
}

TEST_P(OutboxStoreContract, MarkMovesOnlyMessagesStillPendingAtTheAttemptTheyWereReadWith) {
  const RowId a = add(1, t0);
  const RowId b = add(2, t0);
  const RowId c = add(3, t0);
  const std::vector<Message> read = scan(1, t0);
  ASSERT_EQ(ids(read), (std::vector<RowId>{a, b, c}));
  std::vector<Message> out;
  // Another leader's cycle marks `a` first.
  EXPECT_EQ(store->mark(1, t0, kTimeout, std::span<const Message>(read).first(1), out), 1u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], store->get(a));
  const Time later = t0 + seconds(2);
  std::vector<Message> with_strays = read;
  Message ghost = read[0];
  ghost.id = 99;  // no such message
  with_strays.push_back(ghost);
  with_strays.push_back(read[1]);  // named twice
  EXPECT_EQ(store->mark(2, later, kTimeout, with_strays, out), 2u);
  EXPECT_EQ(ids(out), (std::vector<RowId>{b, c}));
  for (const Message& m : out) {
    EXPECT_EQ(m.status, Status::processing);
    EXPECT_EQ(m.attempt, 1u);
    EXPECT_EQ(m.next_attempt, later + kTimeout);
    EXPECT_EQ(m.fence, 2u);
    EXPECT_EQ(store->get(m.id), m);
  }
  const Message a_now = *store->get(a);
  EXPECT_EQ(a_now.attempt, 1u) << "marked once";
  EXPECT_EQ(a_now.fence, 1u);
  EXPECT_EQ(a_now.next_attempt, t0 + kTimeout);

  // `a` is rescued back to pending at attempt 1: a copy read at attempt 0 no longer marks it.
  ASSERT_EQ(rescue(2, t0 + kTimeout, out), 1u);
  EXPECT_EQ(store->mark(2, t0 + kTimeout, kTimeout, std::span<const Message>(read).first(1), out), 0u);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(store->get(a)->status, Status::pending);
  const std::vector<Message> fresh = scan(2, t0 + kTimeout);
  ASSERT_EQ(ids(fresh), (std::vector<RowId>{a}));
  EXPECT_EQ(store->mark(2, t0 + kTimeout, kTimeout, fresh, out), 1u);
  EXPECT_EQ(store->get(a)->attempt, 2u);
}

TEST_P(OutboxStoreContract, AStaleTokenWritesNothingAndAnEqualOneWrites) {
  EXPECT_EQ(store->current_fence(), 0u);
  const RowId a = add(1, t0);
  EXPECT_TRUE(store->fence(5));
  EXPECT_EQ(store->current_fence(), 5u);
  EXPECT_FALSE(store->fence(3));
  EXPECT_FALSE(store->fence(0));
  EXPECT_TRUE(store->fence(5)) << "the same leader again";
  EXPECT_EQ(store->current_fence(), 5u);

  std::vector<Message> out{Message{}};
  const Scan stale{.token = 4, .now = t0, .due_by = t0, .limit = 10, .ordering = Ordering::none, .mark = true,
                   .processing_timeout = kTimeout};
  EXPECT_FALSE(store->scan(stale, out));
  EXPECT_TRUE(out.empty()) << "a stale scan returns nothing";
  EXPECT_EQ(store->get(a)->status, Status::pending);
  const std::vector<Message> read = scan(5, t0);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_FALSE(store->mark(4, t0, kTimeout, read, out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(store->get(a)->status, Status::pending);
  EXPECT_EQ(store->mark(5, t0, kTimeout, read, out), 1u);
  EXPECT_FALSE(rescue(4, t0 + kTimeout, out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(store->get(a)->status, Status::processing);

  // Any fenced write with a larger token raises the fence: scan, mark and rescue as well.
  EXPECT_TRUE(scan(7, t0).empty());
  EXPECT_EQ(store->current_fence(), 7u);
  EXPECT_FALSE(store->fence(6));
  EXPECT_EQ(store->mark(8, t0, kTimeout, read, out), 0u);
  EXPECT_EQ(store->current_fence(), 8u);
  EXPECT_EQ(rescue(9, t0, out), 0u);
  EXPECT_EQ(store->current_fence(), 9u);
  EXPECT_FALSE(store->fence(8));
  EXPECT_EQ(rescue(9, t0 + kTimeout, out), 1u) << "an equal token writes";
  EXPECT_EQ(store->current_fence(), 9u);
}

TEST_P(OutboxStoreContract, RelockSaysLockedNotYetOrGone) {
  const RowId a = add(1, t0);
  Message out;
  EXPECT_EQ(store->relock(a, 1, out), Relock::not_yet) << "published, not yet marked";
  EXPECT_EQ(out, store->get(a));
  EXPECT_EQ(store->relock(a, 0, out), Relock::gone);
  EXPECT_EQ(store->relock(a, 2, out), Relock::gone);
  ASSERT_EQ(take(1, t0).size(), 1u);
  EXPECT_EQ(store->relock(a, 1, out), Relock::locked);
  EXPECT_EQ(out, store->get(a));
  EXPECT_EQ(out.status, Status::processing);
  EXPECT_EQ(store->relock(a, 2, out), Relock::gone) << "a record from the future";
  EXPECT_EQ(store->relock(a, 0, out), Relock::gone) << "a stale record";
  // Retried: pending at attempt 1; a record for attempt 2 is not yet marked, one for 1 is stale.
  ASSERT_TRUE(store->finish(a, 1, done(Status::pending, Reason::none, t0 + seconds(5))));
  EXPECT_EQ(store->relock(a, 2, out), Relock::not_yet);
  EXPECT_EQ(store->relock(a, 1, out), Relock::gone);
  ASSERT_EQ(take(1, t0 + seconds(5)).size(), 1u);
  EXPECT_EQ(store->relock(a, 2, out), Relock::locked);
  ASSERT_TRUE(store->finish(a, 2, done(Status::handled)));
  EXPECT_EQ(store->relock(a, 2, out), Relock::gone);
  EXPECT_EQ(out.status, Status::handled);
  EXPECT_EQ(store->relock(a, 3, out), Relock::gone);
  EXPECT_EQ(store->relock(42, 1, out), Relock::gone);
}

TEST_P(OutboxStoreContract, FinishAppliesOnlyWhileProcessingUnderItsAttempt) {
  const RowId a = add(1, t0);
  const RowId b = add(2, t0);
  EXPECT_FALSE(store->finish(a, 0, done(Status::handled))) << "pending";
  EXPECT_FALSE(store->finish(a, 1, done(Status::handled))) << "pending";
  ASSERT_EQ(take(1, t0).size(), 2u);
  EXPECT_FALSE(store->finish(a, 2, done(Status::handled))) << "another attempt";
  EXPECT_FALSE(store->finish(a, 0, done(Status::handled)));
  EXPECT_FALSE(store->finish(77, 1, done(Status::handled))) << "no such message";
  EXPECT_EQ(store->get(a)->status, Status::processing);
  EXPECT_TRUE(store->finish(a, 1, done(Status::handled)));
  EXPECT_TRUE(store->finish(b, 1, done(Status::failed, Reason::rejected)));
  const Message ah = *store->get(a);
  const Message bf = *store->get(b);
  EXPECT_EQ(ah.status, Status::handled);
  EXPECT_EQ(ah.reason, Reason::none);
  EXPECT_EQ(ah.attempt, 1u);
  EXPECT_EQ(bf.status, Status::failed);
  EXPECT_EQ(bf.reason, Reason::rejected);
  EXPECT_FALSE(store->finish(a, 1, done(Status::failed, Reason::rejected))) << "only once";
  EXPECT_EQ(store->get(a), ah);
  EXPECT_EQ(in(Status::handled), 1u);
  EXPECT_EQ(in(Status::failed), 1u);
}

TEST_P(OutboxStoreContract, FinishingToPendingRequeuesAtTheNextAttempt) {
  const RowId a = add(1, t0);
  const RowId b = add(2, t0 + seconds(3));
  ASSERT_EQ(ids(take(1, t0)), (std::vector<RowId>{a}));
  ASSERT_TRUE(store->finish(a, 1, done(Status::pending, Reason::none, t0 + seconds(10))));
  const Message m = *store->get(a);
  EXPECT_EQ(m.status, Status::pending);
  EXPECT_EQ(m.attempt, 1u);
  EXPECT_EQ(m.next_attempt, t0 + seconds(10));
  EXPECT_FALSE(store->finish(a, 1, done(Status::handled))) << "no longer processing";
  EXPECT_EQ(ids(scan(1, t0 + seconds(9))), (std::vector<RowId>{b}));
  EXPECT_EQ(ids(scan(1, t0 + seconds(10))), (std::vector<RowId>{b, a}));
  const std::vector<Message> again = take(1, t0 + seconds(10));
  ASSERT_EQ(ids(again), (std::vector<RowId>{b, a}));
  EXPECT_EQ(again[1].attempt, 2u);
  EXPECT_EQ(again[1].next_attempt, t0 + seconds(10) + kTimeout);
}

TEST_P(OutboxStoreContract, RescueReturnsOverdueProcessingMessagesToPendingInOrder) {
  const RowId a = add(1, t0);
  const RowId b = add(2, t0);
  const RowId c = add(3, t0 + seconds(5));
  ASSERT_EQ(ids(take(1, t0)), (std::vector<RowId>{a, b}));           // due t0 + 30 s
  ASSERT_EQ(ids(take(1, t0 + seconds(5))), (std::vector<RowId>{c}));  // due t0 + 35 s
  std::vector<Message> out{Message{}};
  EXPECT_EQ(rescue(1, t0 + kTimeout - seconds(1), out), 0u) << "not before its processing timeout";
  EXPECT_TRUE(out.empty());
  const Time now = t0 + seconds(40);
  EXPECT_EQ(rescue(1, now, out, 1), 1u);
  EXPECT_EQ(ids(out), (std::vector<RowId>{a}));
  EXPECT_EQ(rescue(1, now, out, 100, {}, t0 + kTimeout), 1u) << "overdue_by, not now, says what is overdue";
  EXPECT_EQ(ids(out), (std::vector<RowId>{b}));
  for (const Message& m : out) {
    EXPECT_EQ(m.status, Status::pending);
    EXPECT_EQ(m.attempt, 1u) << "a rescue is no attempt";
    EXPECT_EQ(m.next_attempt, now);
    EXPECT_EQ(store->get(m.id), m);
  }
  EXPECT_EQ(rescue(1, now, out), 1u);
  EXPECT_EQ(ids(out), (std::vector<RowId>{c}));
  EXPECT_EQ(in(Status::pending), 3u);
  EXPECT_EQ(in(Status::processing), 0u);
  EXPECT_EQ(ids(scan(1, now)), (std::vector<RowId>{a, b, c}));
  Message lock;
  EXPECT_EQ(store->relock(a, 1, lock), Relock::gone) << "the record of the rescued attempt is stale";
  EXPECT_FALSE(store->finish(a, 1, done(Status::handled))) << "so is its consumer";
}

TEST_P(OutboxStoreContract, RescueFailsMessagesWhoseAttemptsAreSpent) {
  const RowId t0a = add(1, t0, 0);  // type 0: at most 1 attempt
  const RowId t1a = add(2, t0, 1);  // type 1: at most 2
  const RowId t2a = add(3, t0, 2);  // type 2: past the span, no limit
  const std::vector<std::uint16_t> limits{1, 2};
  ASSERT_EQ(take(1, t0).size(), 3u);
  std::vector<Message> out;
  Time now = t0 + kTimeout;
  ASSERT_EQ(rescue(1, now, out, 100, limits), 3u);
  ASSERT_EQ(ids(out), (std::vector<RowId>{t0a, t1a, t2a}));
  EXPECT_EQ(out[0].status, Status::failed);
  EXPECT_EQ(out[0].reason, Reason::exhausted);
  EXPECT_EQ(out[1].status, Status::pending);
  EXPECT_EQ(out[2].status, Status::pending);
  for (const Message& m : out) EXPECT_EQ(store->get(m.id), m);
  ASSERT_EQ(ids(take(1, now)), (std::vector<RowId>{t1a, t2a}));
  now += kTimeout;
  ASSERT_EQ(rescue(1, now, out, 100, limits), 2u);
  EXPECT_EQ(out[0].status, Status::failed);
  EXPECT_EQ(out[0].reason, Reason::exhausted);
  EXPECT_EQ(out[0].attempt, 2u);
  EXPECT_EQ(out[1].status, Status::pending);
  EXPECT_EQ(out[1].attempt, 2u);
  EXPECT_EQ(in(Status::failed), 2u);
  EXPECT_EQ(in(Status::pending), 1u);
  EXPECT_EQ(ids(scan(1, now, 100, Ordering::per_key)), (std::vector<RowId>{t2a}));
}

TEST_P(OutboxStoreContract, AFinalMessageNeverChanges) {
  const RowId a = add(1, t0);
  const RowId b = add(2, t0);
  const std::vector<Message> read = scan(1, t0);
  ASSERT_EQ(take(1, t0).size(), 2u);
  ASSERT_TRUE(store->finish(a, 1, done(Status::handled)));
  ASSERT_TRUE(store->finish(b, 1, done(Status::failed, Reason::rejected)));
  const Message ha = *store->get(a);
  const Message fb = *store->get(b);
  const Time late = t0 + std::chrono::hours(1);
  std::vector<Message> out;
  EXPECT_TRUE(scan(2, late, 100, Ordering::none, true, kTimeNever).empty());
  EXPECT_EQ(store->mark(2, late, kTimeout, read, out), 0u);
  std::vector<Message> as_now{ha, fb};
  EXPECT_EQ(store->mark(2, late, kTimeout, as_now, out), 0u);
  EXPECT_EQ(rescue(2, late, out, 100, {}, kTimeNever), 0u);
  for (const Status s : {Status::handled, Status::failed, Status::pending}) {
    EXPECT_FALSE(store->finish(a, 1, done(s, Reason::none, late)));
    EXPECT_FALSE(store->finish(b, 1, done(s, Reason::none, late)));
  }
  Message lock;
  EXPECT_EQ(store->relock(a, 1, lock), Relock::gone);
  EXPECT_EQ(store->relock(a, 2, lock), Relock::gone);
  EXPECT_EQ(store->get(a), ha);
  EXPECT_EQ(store->get(b), fb);
  EXPECT_FALSE(store->next_due(Ordering::none));
  EXPECT_FALSE(store->next_due(Ordering::per_key));
}

TEST_P(OutboxStoreContract, CountsFollowEveryChange) {
  for (EntityKey k = 1; k <= 5; ++k) add(k, t0);
  StoreCounts c = store->counts();
  EXPECT_EQ(c.messages, 5u);
  EXPECT_EQ(c.by_status, (std::array<std::uint64_t, kStatusCount>{5, 0, 0, 0}));
  ASSERT_EQ(take(1, t0, Ordering::none, 4).size(), 4u);
  ASSERT_TRUE(store->finish(1, 1, done(Status::handled)));
  ASSERT_TRUE(store->finish(2, 1, done(Status::failed, Reason::rejected)));
  ASSERT_TRUE(store->finish(3, 1, done(Status::pending, Reason::none, t0)));
  c = store->counts();
  EXPECT_EQ(c.messages, 5u);
  EXPECT_EQ(c.by_status, (std::array<std::uint64_t, kStatusCount>{2, 1, 1, 1}));
  std::vector<Message> out;
  ASSERT_EQ(rescue(1, t0 + kTimeout, out, 100, {1}), 1u);
  EXPECT_EQ(store->counts().by_status, (std::array<std::uint64_t, kStatusCount>{2, 0, 1, 2}));
  store->begin(t0);
  store->add({0, 9, 1, 1});
  store->rollback();
  EXPECT_EQ(store->counts().messages, 5u);
}

// A store serves one ordering (the relay's configuration): each of these tests asks with one.
TEST_P(OutboxStoreContract, NextDueIsTheEarliestPendingOrProcessingMessage) {
  EXPECT_FALSE(store->next_due(Ordering::none));
  const RowId a = add(1, t0 + seconds(10));
  const RowId b = add(2, t0 + seconds(2));
  EXPECT_EQ(store->next_due(Ordering::none), t0 + seconds(2));
  ASSERT_EQ(ids(scan(1, t0 + seconds(2))), (std::vector<RowId>{b}));
  EXPECT_EQ(store->next_due(Ordering::none), t0 + seconds(2)) << "a scan that does not mark leaves its messages due";
  ASSERT_EQ(ids(take(1, t0 + seconds(2))), (std::vector<RowId>{b}));
  EXPECT_EQ(store->next_due(Ordering::none), t0 + seconds(10));
  ASSERT_EQ(ids(take(1, t0 + seconds(10))), (std::vector<RowId>{a}));
  EXPECT_EQ(store->next_due(Ordering::none), t0 + seconds(2) + kTimeout) << "a processing message's timeout";
  ASSERT_TRUE(store->finish(b, 1, done(Status::pending, Reason::none, t0 + seconds(50))));
  EXPECT_EQ(store->next_due(Ordering::none), t0 + seconds(10) + kTimeout);
  EXPECT_EQ(store->next_due(Ordering::none), t0 + seconds(10) + kTimeout) << "asking again changes nothing";
  ASSERT_TRUE(store->finish(a, 1, done(Status::handled)));
  EXPECT_EQ(store->next_due(Ordering::none), t0 + seconds(50));
  ASSERT_EQ(ids(take(1, t0 + seconds(50))), (std::vector<RowId>{b}));
  ASSERT_TRUE(store->finish(b, 2, done(Status::failed, Reason::rejected)));
  EXPECT_FALSE(store->next_due(Ordering::none));
}

TEST_P(OutboxStoreContract, UnderPerKeyNextDueWaitsForAKeysHead) {
  EXPECT_FALSE(store->next_due(Ordering::per_key));
  const RowId a1 = add(1, t0);
  const RowId a2 = add(1, t0 + seconds(1));
  const RowId b1 = add(2, t0 + seconds(5));
  EXPECT_EQ(store->next_due(Ordering::per_key), t0);
  ASSERT_EQ(ids(scan(1, t0, 1, Ordering::per_key)), (std::vector<RowId>{a1}));
  EXPECT_EQ(store->next_due(Ordering::per_key), t0) << "a scan that does not mark leaves its messages due";
  // The head of key 1 processing until t0 + 30 s: its follower may not go before then.
  ASSERT_EQ(ids(take(1, t0, Ordering::per_key)), (std::vector<RowId>{a1}));
  EXPECT_EQ(store->next_due(Ordering::per_key), t0 + seconds(5)) << "a message behind its key's head waits for it";
  ASSERT_EQ(ids(take(1, t0 + seconds(5), Ordering::per_key)), (std::vector<RowId>{b1}));
  ASSERT_TRUE(store->finish(b1, 1, done(Status::handled)));
  EXPECT_EQ(store->next_due(Ordering::per_key), t0 + kTimeout) << "the head's processing timeout";
  EXPECT_EQ(store->next_due(Ordering::per_key), t0 + kTimeout) << "asking again changes nothing";
  ASSERT_TRUE(store->finish(a1, 1, done(Status::handled)));
  EXPECT_EQ(store->next_due(Ordering::per_key), t0 + seconds(1)) << "the follower's turn";
  ASSERT_EQ(ids(take(1, t0 + seconds(6), Ordering::per_key)), (std::vector<RowId>{a2}));
  EXPECT_EQ(store->next_due(Ordering::per_key), t0 + seconds(6) + kTimeout);
  ASSERT_TRUE(store->finish(a2, 1, done(Status::pending, Reason::none, t0 + seconds(50))));
  EXPECT_EQ(store->next_due(Ordering::per_key), t0 + seconds(50));
  ASSERT_EQ(ids(take(1, t0 + seconds(50), Ordering::per_key)), (std::vector<RowId>{a2}));
  ASSERT_TRUE(store->finish(a2, 2, done(Status::handled)));
  EXPECT_FALSE(store->next_due(Ordering::per_key));
}

INSTANTIATE_TEST_SUITE_P(
    OutboxStores, OutboxStoreContract,
    ::testing::Values(StoreFactory{"memory", [] { return std::unique_ptr<Store>(new MemoryStore()); }},
                      StoreFactory{"sqlite",
                                   [] { return std::unique_ptr<Store>(new SqliteStore(":memory:", Durability::full)); }},
                      // As simulations run it: one long transaction, each call in a savepoint.
                      StoreFactory{"sqlite_batched",
                                   [] { return std::unique_ptr<Store>(new SqliteStore(":memory:", Durability::off)); }},
                      StoreFactory{"postgres", postgres_store, false}),
    [](const ::testing::TestParamInfo<StoreFactory>& p) { return std::string(p.param.name); });

// PostgreSQL going away under the store: a call then is a StoreError saying so (io, or busy while
// it cannot connect), an open business operation is lost whole, and once the server is back the
// next call connects again and finds everything that was committed.
TEST(PgStore, AServerGoneIsAStoreErrorAndTheNextCallAfterItsReturnConnectsAgain) {
  testing_pg::PgServer server;
  std::string problem;
  ASSERT_TRUE(server.start(problem)) << problem;
  live::outbox::PgStore store(server.conninfo("postgres"));
  const Time t0 = Time{} + seconds(100);
  {
    Operation op(store, t0);
    ASSERT_EQ(op->add({0, 7, 1, op->write_entity(7)}), 1u);
    op.commit();
  }
  store.begin(t0 + seconds(1));
  store.add({0, 8, 1, store.write_entity(8)});
  server.stop();  // immediate: the open transaction dies with it
  const auto failure_of = [](auto&& call) {
    try {
      call();
    } catch (const StoreError& e) {
      return std::optional<StoreFailure>(e.failure());
    }
    return std::optional<StoreFailure>();
  };
  const std::optional<StoreFailure> commit = failure_of([&] { store.commit(); });
  ASSERT_TRUE(commit.has_value()) << "a commit to a server that is gone";
  EXPECT_TRUE(*commit == StoreFailure::io || *commit == StoreFailure::busy) << to_string(*commit);
  const std::optional<StoreFailure> read = failure_of([&] { (void)store.get(1); });
  ASSERT_TRUE(read.has_value()) << "a read from a server that is gone";
  EXPECT_EQ(*read, StoreFailure::busy) << "no connection can be made: try again later";
  ASSERT_TRUE(server.start(problem)) << problem;
  ASSERT_TRUE(store.get(1).has_value()) << "the committed message, after the server's return";
  EXPECT_FALSE(store.get(2).has_value()) << "the operation open when it went away was lost whole";
  EXPECT_FALSE(store.entity_version(8).has_value());
  EXPECT_EQ(store.counts().messages, 1u);
}

// SKIP LOCKED, which the memory and SQLite stores have no call for (one writer at a time): a
// leader's marking scan passes over a row another transaction holds — another leader of the shard
// that still believes itself leader, marking it — rather than wait for it, and takes it once it
// is let go.
TEST(PgStore, AMarkingScanPassesOverARowAnotherTransactionHolds) {
  testing_pg::PgServer server;
  std::string problem;
  ASSERT_TRUE(server.start(problem)) << problem;
  live::outbox::PgStore store(server.conninfo("postgres"));
  const Time t0 = Time{} + seconds(100);
  for (EntityKey key = 1; key <= 3; ++key) {
    Operation op(store, t0);
    op->add({0, key, 1, op->write_entity(key)});
    op.commit();
  }
  PGconn* other = PQconnectdb(server.conninfo("postgres").c_str());
  ASSERT_EQ(PQstatus(other), CONNECTION_OK);
  const auto exec = [&](const char* sql) {
    PGresult* r = PQexec(other, sql);
    const ExecStatusType status = PQresultStatus(r);
    PQclear(r);
    return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
  };
  ASSERT_TRUE(exec("BEGIN"));
  ASSERT_TRUE(exec("SELECT id FROM outbox_request WHERE id = 1 FOR UPDATE"));
  const auto take = [&](FenceToken token, Time now) {
    const Scan s{.token = token, .now = now, .due_by = now, .limit = 10, .ordering = Ordering::none, .mark = true,
                 .processing_timeout = seconds(30)};
    std::vector<Message> out;
    EXPECT_TRUE(store.scan(s, out));
    return ids(out);
  };
  EXPECT_EQ(take(1, t0 + seconds(1)), (std::vector<RowId>{2, 3})) << "row 1 is held: passed over, not waited for";
  ASSERT_TRUE(exec("ROLLBACK"));
  EXPECT_EQ(take(1, t0 + seconds(2)), (std::vector<RowId>{1})) << "let go: taken";
  PQfinish(other);
}

// ---- a failed call changes nothing ------------------------------------------------------------

// Fails the statement step numbered `at` (from 0) after it is armed, once.
class FailAt final : public FailPoint {
 public:
  std::optional<StoreFailure> before_step(bool) override {
    if (!armed) return std::nullopt;
    if (steps++ != at) return std::nullopt;
    fired = true;
    return StoreFailure::io;
  }
  bool armed = false;
  std::uint32_t at = 0;
  std::uint32_t steps = 0;
  bool fired = false;
};

// Everything a caller can read back, to compare before and after a failed call.
struct Snapshot {
  std::vector<std::optional<Message>> rows;
  std::vector<std::optional<std::uint64_t>> entities;
  FenceToken fence = 0;
  StoreCounts counts;
  std::optional<Time> due_any, due_per_key;
  bool operator==(const Snapshot& o) const {
    return rows == o.rows && entities == o.entities && fence == o.fence && counts.by_status == o.counts.by_status &&
           counts.messages == o.counts.messages && due_any == o.due_any && due_per_key == o.due_per_key;
  }
};

Snapshot snapshot(Store& s) {
  Snapshot out;
  for (RowId id = 1; id <= 12; ++id) out.rows.push_back(s.get(id));
  for (EntityKey k = 1; k <= 4; ++k) out.entities.push_back(s.entity_version(k));
  out.fence = s.current_fence();
  out.counts = s.counts();
  out.due_any = s.next_due(Ordering::none);
  out.due_per_key = s.next_due(Ordering::per_key);
  return out;
}

class OutboxStoreFailures : public ::testing::TestWithParam<Durability> {};

// Every call that writes, failed at each of its statements in turn: it throws StoreError, and the
// store reads back exactly as before.
TEST_P(OutboxStoreFailures, AFailedCallThrowsAndChangesNothing) {
  const Time t0 = Time{} + seconds(100);
  const Time now = t0 + kTimeout;
  using Call = std::function<void(Store&)>;
  const std::vector<std::pair<const char*, Call>> calls{
      {"operation",
       [&](Store& s) {
         Operation op(s, now);
         const std::uint64_t v = op->write_entity(1);
         op->add({0, 1, 1, v});
         op->add({0, 4, 4, op->write_entity(4)});
         op.commit();
       }},
      {"fence", [](Store& s) { s.fence(9); }},
      {"scan",
       [&](Store& s) {
         std::vector<Message> out;
         s.scan(Scan{.token = 9, .now = now, .due_by = now, .limit = 10, .ordering = Ordering::per_key, .mark = false,
                     .processing_timeout = kTimeout},
                out);
       }},
      {"scan_mark",
       [&](Store& s) {
         std::vector<Message> out;
         s.scan(Scan{.token = 9, .now = now, .due_by = now, .limit = 10, .ordering = Ordering::none, .mark = true,
                     .processing_timeout = kTimeout},
                out);
       }},
      {"mark",
       [&](Store& s) {
         std::vector<Message> in{*s.get(4), *s.get(5), *s.get(1)}, out;
         s.mark(9, now, kTimeout, in, out);
       }},
      {"rescue",
       [&](Store& s) {
         std::vector<Message> out;
         const std::vector<std::uint16_t> limits{1, 5};
         s.rescue(9, now, now, 10, limits, out);
       }},
      {"finish", [&](Store& s) { s.finish(2, 1, Finish{Status::pending, Reason::none, now, now}); }},
  };
  for (const auto& [name, call] : calls) {
    for (std::uint32_t at = 0;; ++at) {
      SCOPED_TRACE(std::string(name) + ", failing statement " + std::to_string(at));
      SqliteStore store(":memory:", GetParam());
      // Three messages of key 1 (the first two processing, one of them due for rescue), one
      // of key 2, a pending one of key 3, and the fence at 5.
      for (EntityKey k : {1, 1, 1, 2, 3}) {
        Operation op(store, k == 3 ? now : t0);
        op->add({k == 2 ? 1u : 0u, k, static_cast<std::uint32_t>(k), op->write_entity(k)});
        op.commit();
      }
      std::vector<Message> out;
      ASSERT_TRUE(store.scan(Scan{.token = 5, .now = t0, .due_by = t0, .limit = 2, .ordering = Ordering::none,
                                  .mark = true, .processing_timeout = kTimeout},
                             out));
      ASSERT_TRUE(store.finish(1, 1, Finish{Status::pending, Reason::none, t0, t0}));
      ASSERT_TRUE(store.scan(Scan{.token = 5, .now = t0 + seconds(1), .due_by = t0, .limit = 1,
                                  .ordering = Ordering::none, .mark = true, .processing_timeout = kTimeout},
                             out));
      const Snapshot before = snapshot(store);
      FailAt fail;
      fail.at = at;
      fail.armed = true;
      store.db().set_fail_point(&fail);
      bool threw = false;
      try {
        call(store);
      } catch (const StoreError& e) {
        threw = true;
        EXPECT_EQ(e.failure(), StoreFailure::io);
      }
      store.db().set_fail_point(nullptr);
      EXPECT_EQ(threw, fail.fired);
      if (!threw) {
        EXPECT_FALSE(snapshot(store) == before) << "the call changes something when it does not fail";
        break;
      }
      EXPECT_TRUE(snapshot(store) == before) << "a failed call changed the store";
      // The store goes on working after the failure.
      std::vector<Message> again;
      EXPECT_TRUE(store.scan(Scan{.token = 9, .now = now, .due_by = now, .limit = 10, .ordering = Ordering::none,
                                  .mark = true, .processing_timeout = kTimeout},
                             again));
      if (HasFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OutboxStores, OutboxStoreFailures, ::testing::Values(Durability::full, Durability::off),
                         [](const ::testing::TestParamInfo<Durability>& p) {
                           return std::string(p.param == Durability::full ? "sqlite" : "sqlite_batched");
                         });

// ---- MemoryStore and another store give the same answers ---------------------------------------

// Random calls, each made on the memory store and another (SQLite, PostgreSQL); every answer and,
// every `compare_every` calls, every row must be the same. The calls stay within what a relay and
// its consumers do (one ordering per store, the leader's token mostly rising), and stray outside
// it where the contract still answers: stale tokens, marks of messages read long ago or never
// returned by a scan, finishes of the wrong attempt, records for any attempt.
// A store may hand a rolled-back operation's ids out again or not (the contract allows either):
// each side's ids are translated to the other's, so that rows are compared as the same message.
class Differential {
 public:
  Differential(std::uint64_t seed, Ordering ordering, Store& other, int compare_every = 1)
      : rng_(seed), ordering_(ordering), other_(other), compare_every_(compare_every) {}

  void run(int steps) {
    for (int step = 0; step < steps; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      one_step();
      if (step % compare_every_ == 0 || step + 1 == steps) compare_rows();
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(rows_, 100u) << "the run made messages";
  }

 private:
  std::uint64_t below(std::uint64_t n) { return rng_.below(n); }
  // A time up to `max_seconds` after `base`, in whole seconds.
  Time at(Time base, std::uint64_t max_seconds) { return base + seconds(static_cast<std::int64_t>(below(max_seconds + 1))); }

  // The other store's id of the memory store's message `id`; one it never handed out when there
  // is none (a ghost stays a ghost on both sides).
  RowId to_other(RowId id) const {
    const auto it = to_other_.find(id);
    return it != to_other_.end() ? it->second : kGhost + id;
  }
  Message from_other(Message m) const {
    const auto it = from_other_.find(m.id);
    m.id = it != from_other_.end() ? it->second : m.id - kGhost;
    return m;
  }
  std::vector<Message> from_other(const std::vector<Message>& ms) const {
    std::vector<Message> out;
    for (const Message& m : ms) out.push_back(from_other(m));
    return out;
  }
  std::optional<Message> from_other(const std::optional<Message>& m) const {
    return m ? std::optional<Message>(from_other(*m)) : std::nullopt;
  }

  void one_step() {
    const std::uint64_t pick = below(100);
    if (pick < 8) {
      now_ += seconds(static_cast<std::int64_t>(below(20)));
    } else if (pick < 26) {
      operation();
    } else if (pick < 30) {
      SCOPED_TRACE("fence");
      const FenceToken t = token();
      EXPECT_EQ(memory_.fence(t), other_.fence(t));
    } else if (pick < 46) {
      scan();
    } else if (pick < 54) {
      mark();
    } else if (pick < 59) {
      rescue();
    } else if (pick < 72) {
      relock();
    } else if (pick < 92) {
      finish();
    } else {
      reads();
    }
  }

  // Mostly the current leader's token; now and then a new leader's, or a stale one.
  FenceToken token() {
    const std::uint64_t p = below(10);
    if (p == 0) return ++leader_;
    if (p == 1 && leader_ > 1) return leader_ - 1 - below(leader_ - 1);
    return leader_;
  }

  void operation() {
    SCOPED_TRACE("operation");
    const bool commit = below(5) != 0;
    memory_.begin(now_);
    other_.begin(now_);
    const std::uint64_t writes = 1 + below(3);
    std::vector<std::pair<RowId, RowId>> added;
    for (std::uint64_t i = 0; i < writes; ++i) {
      const EntityKey key = 1 + below(6);
      const std::uint64_t v = memory_.write_entity(key);
      EXPECT_EQ(v, other_.write_entity(key));
      for (std::uint64_t j = below(3); j > 0; --j) {
        const NewMessage m{static_cast<std::uint32_t>(below(3)), key, static_cast<std::uint32_t>(key % 4), v};
        const RowId id = memory_.add(m);
        added.emplace_back(id, other_.add(m));
      }
    }
    if (commit) {
      memory_.commit();
      other_.commit();
      rows_ += added.size();
      for (const auto& [mine, theirs] : added) {
        ASSERT_TRUE(to_other_.emplace(mine, theirs).second) << "the memory store handed id " << mine << " out twice";
        ASSERT_TRUE(from_other_.emplace(theirs, mine).second) << "the other store handed id " << theirs << " out twice";
        ASSERT_TRUE(theirs > last_other_) << "the other store's ids grow with the commits";
        last_other_ = theirs;
      }
    } else {
      memory_.rollback();
      other_.rollback();
    }
    for (EntityKey k = 1; k <= 6; ++k) EXPECT_EQ(memory_.entity_version(k), other_.entity_version(k));
  }

  void scan() {
    SCOPED_TRACE("scan");
    Scan s;
    s.token = token();
    s.now = now_;
    s.due_by = below(10) == 0 ? at(now_, 60) : now_;
    s.limit = static_cast<std::uint32_t>(below(6));
    s.ordering = ordering_;
    s.mark = below(2) == 0;
    s.processing_timeout = seconds(static_cast<std::int64_t>(5 + below(40)));
    std::vector<Message> a, b;
    const bool ra = memory_.scan(s, a);
    EXPECT_EQ(ra, other_.scan(s, b));
    EXPECT_EQ(a, from_other(b));
    if (ra && !a.empty()) last_scan_ = a;
  }

  // Usually what the last scan returned (publish_then_mark); sometimes any rows as they are, or
  // with another attempt.
  void mark() {
    SCOPED_TRACE("mark");
    std::vector<Message> in = last_scan_;
    if (below(3) == 0 || in.empty()) {
      in.clear();
      for (std::uint64_t n = 1 + below(4); n > 0; --n) {
        if (std::optional<Message> m = memory_.get(1 + below(rows_ + 2))) {
          if (below(4) == 0) m->attempt = static_cast<std::uint16_t>(m->attempt + below(3) - 1);
          in.push_back(*m);
        } else {
          Message ghost;
          ghost.id = rows_ + 1 + below(3);
          in.push_back(ghost);
        }
      }
    }
    std::vector<Message> theirs = in;
    for (Message& m : theirs) m.id = to_other(m.id);
    const FenceToken t = token();
    const Duration timeout = seconds(static_cast<std::int64_t>(5 + below(40)));
    std::vector<Message> a, b;
    EXPECT_EQ(memory_.mark(t, now_, timeout, in, a), other_.mark(t, now_, timeout, theirs, b));
    EXPECT_EQ(a, from_other(b));
  }

  void rescue() {
    SCOPED_TRACE("rescue");
    const FenceToken t = token();
    const Time overdue_by = below(10) == 0 ? at(now_, 60) : now_;
    const std::uint32_t limit = static_cast<std::uint32_t>(below(5));
    const std::vector<std::uint16_t> limits{2, 4};  // type 2 has none
    std::vector<Message> a, b;
    EXPECT_EQ(memory_.rescue(t, now_, overdue_by, limit, limits, a), other_.rescue(t, now_, overdue_by, limit, limits, b));
    EXPECT_EQ(a, from_other(b));
  }

  // Mostly a processing message (a consumer holds its record); sometimes any id, or none.
  RowId pick_id() {
    RowId id = below(rows_ + 3);
    if (below(4) != 0) {
      for (int probe = 0; probe < 8; ++probe) {
        const std::optional<Message> m = memory_.get(id);
        if (m && m->status == Status::processing) break;
        id = 1 + below(rows_ + 1);
      }
    }
    return id;
  }

  void relock() {
    SCOPED_TRACE("relock");
    const RowId id = pick_id();
    const std::optional<Message> m = memory_.get(id);
    const std::uint64_t p = below(4);
    const std::uint16_t attempt = static_cast<std::uint16_t>((m ? m->attempt : 0) + (p < 2 ? 0 : p == 2 ? 1 : 2));
    Message a, b;
    EXPECT_EQ(memory_.relock(id, attempt, a), other_.relock(to_other(id), attempt, b));
    if (b.id != 0) b = from_other(b);
    EXPECT_EQ(a, b);
  }

  // Mostly a processing message's consumer; sometimes any message, any attempt.
  void finish() {
    SCOPED_TRACE("finish");
    const RowId id = pick_id();
    const std::optional<Message> m = memory_.get(id);
    const std::uint16_t attempt =
        static_cast<std::uint16_t>((m ? m->attempt : 1) + (below(5) == 0 ? below(3) : 1) - 1);
    Finish f;
    const std::uint64_t p = below(10);
    f.status = p < 4 ? Status::handled : p < 6 ? Status::failed : Status::pending;
    f.reason = f.status == Status::failed ? Reason::rejected : Reason::none;
    f.next_attempt = at(now_, 30);
    f.at = now_;
    EXPECT_EQ(memory_.finish(id, attempt, f), other_.finish(to_other(id), attempt, f));
  }

  void reads() {
    SCOPED_TRACE("reads");
    EXPECT_EQ(memory_.current_fence(), other_.current_fence());
    EXPECT_EQ(memory_.next_due(ordering_), other_.next_due(ordering_));
    const StoreCounts a = memory_.counts();
    const StoreCounts b = other_.counts();
    EXPECT_EQ(a.by_status, b.by_status);
    EXPECT_EQ(a.messages, b.messages);
    EXPECT_EQ(a.messages, rows_);
  }

  void compare_rows() {
    for (RowId id = 0; id <= rows_ + 1; ++id) {
      EXPECT_EQ(memory_.get(id), from_other(other_.get(to_other(id)))) << "row " << id;
      if (::testing::Test::HasFailure()) return;
    }
  }

  static constexpr RowId kGhost = RowId{1} << 40;  // past every id a run hands out
  Rng rng_;
  Ordering ordering_;
  MemoryStore memory_;
  Store& other_;
  int compare_every_;
  std::unordered_map<RowId, RowId> to_other_, from_other_;
  RowId last_other_ = 0;
  Time now_ = Time{} + seconds(1000);
  FenceToken leader_ = 1;
  std::uint64_t rows_ = 0;
  std::vector<Message> last_scan_;
};

TEST(OutboxStoreDifferential, MemoryAndSqliteAgreeOnRandomCalls) {
  std::uint64_t seed = 2002;
  for (const Ordering ordering : {Ordering::none, Ordering::per_key}) {
    for (const Durability durability : {Durability::full, Durability::off}) {
      SCOPED_TRACE(std::string(to_string(ordering)) + (durability == Durability::off ? ", batched" : ", full") +
                   ", seed " + std::to_string(seed));
      SqliteStore sqlite(":memory:", durability);
      Differential(seed++, ordering, sqlite).run(3000);
      if (HasFailure()) return;
    }
  }
}

// The store's twin check on PostgreSQL: the same random trace of operations, scans, marks under
// fresh and stale tokens, rescues, re-locks and finishes picks the same rows and refuses the same
// writes as the memory store the simulator runs on (its ids translated: PostgreSQL's sequence does
// not hand a rolled-back operation's ids out again). Rows are compared every 25 calls: each is a
// query.
TEST(OutboxStoreDifferential, MemoryAndPostgresAgreeOnRandomCalls) {
  std::uint64_t seed = 3002;
  for (const Ordering ordering : {Ordering::none, Ordering::per_key}) {
    SCOPED_TRACE(std::string(to_string(ordering)) + ", seed " + std::to_string(seed));
    const std::unique_ptr<Store> postgres = postgres_store();
    Differential(seed++, ordering, *postgres, 25).run(1500);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace relaysim::outbox
