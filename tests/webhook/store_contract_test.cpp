// The Store contract (model/webhook/store.h), run against every implementation.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include "model/webhook/memory_store.h"
#include "model/webhook/sqlite_store.h"

namespace relaysim::webhook {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

struct StoreFactory {
  const char* name;
  std::function<std::unique_ptr<Store>()> make;
};

void PrintTo(const StoreFactory& f, std::ostream* os) { *os << f.name; }

class StoreContract : public ::testing::TestWithParam<StoreFactory> {
 protected:
  std::unique_ptr<Store> store = GetParam().make();
  Time t0 = Time{} + seconds(100);

  RequestId create(std::string_view cxid, std::string_view rid, std::string_view payload = "{}", Time at = {}) {
    const Time when = at == Time{} ? t0 : at;
    const CreateResult r = store->create({cxid, rid, payload, when, when + std::chrono::hours(24)});
    EXPECT_EQ(r.outcome, CreateOutcome::created);
    return r.id;
  }
  Completion retry_at(Time at, Time due) { return Completion{nullptr, Status::pending, Reason::none, at, due, at, {}}; }
};

TEST_P(StoreContract, CreateIsIdempotentOnCxidAndRequestId) {
  const RequestId a = create("cx1", "r1", "{\"v\":1}");
  const CreateResult dup = store->create({"cx1", "r1", "{\"v\":1}", t0, t0});
  EXPECT_EQ(dup.outcome, CreateOutcome::duplicate);
  EXPECT_EQ(dup.id, a);
  const CreateResult conflict = store->create({"cx1", "r1", "{\"v\":2}", t0, t0});
  EXPECT_EQ(conflict.outcome, CreateOutcome::conflict);
  EXPECT_EQ(conflict.id, a);
  EXPECT_EQ(store->get(a)->payload, "{\"v\":1}");  // the conflict changed nothing
  EXPECT_EQ(store->counts().by_status[static_cast<int>(Status::pending)], 1u);
}

TEST_P(StoreContract, ClaimsTheEarliestDueThenTheLowestId) {
  const RequestId late = create("cx", "late", "{}", t0 + seconds(5));
  const RequestId b = create("cx", "b");
  const RequestId c = create("cx", "c");
  RequestRow row;
  EXPECT_FALSE(store->claim_due(t0 - seconds(1), 1, minutes(2), row));
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), row));
  EXPECT_EQ(row.id, b);
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), row));
  EXPECT_EQ(row.id, c);
  EXPECT_FALSE(store->claim_due(t0, 1, minutes(2), row));
  ASSERT_TRUE(store->claim_due(t0 + seconds(5), 2, minutes(2), row));
  EXPECT_EQ(row.id, late);
  EXPECT_EQ(row.lease_owner, 2u);
  EXPECT_EQ(row.status, Status::in_flight);
}

TEST_P(StoreContract, ClaimTokensStrictlyIncrease) {
  create("cx", "a");
  create("cx", "b");
  RequestRow r1, r2;
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), r1));
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), r2));
  EXPECT_LT(r1.claim_token, r2.claim_token);
}

TEST_P(StoreContract, AnExpiredLeaseIsRescuedAndTheOldTokenIsFencedOff) {
  const RequestId id = create("cx", "a");
  RequestRow first, second;
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), first));
  RequestRow none;
  EXPECT_FALSE(store->claim_due(t0 + minutes(1), 2, minutes(2), none));  // lease still held
  ASSERT_TRUE(store->claim_due(t0 + minutes(2), 2, minutes(2), second));  // lease expired: rescue
  EXPECT_EQ(second.id, id);
  EXPECT_GT(second.claim_token, first.claim_token);
  // The first claimant wakes up and tries to complete: nothing changes.
  const Completion delivered{nullptr, Status::delivered, Reason::ok, t0 + minutes(3), {}, {}, {}};
  EXPECT_FALSE(store->complete(id, first.claim_token, delivered));
  EXPECT_EQ(store->get(id)->status, Status::in_flight);
  EXPECT_TRUE(store->complete(id, second.claim_token, delivered));
  EXPECT_EQ(store->get(id)->status, Status::delivered);
  EXPECT_FALSE(store->complete(id, second.claim_token, delivered));  // not twice either
}

TEST_P(StoreContract, ExpiredLeasesAreRescuedInExpiryThenIdOrderWhateverTheirLengths) {
  // The memory store queues leases in the order they were taken and must fall back to its heap
  // when a lease ends before an earlier one (a shorter lease) or at the same time with a lower
  // id; every store must answer as if it sorted them all.
  const RequestId a = create("cx", "a", "{}", t0 + seconds(30));
  const RequestId b = create("cx", "b");
  const RequestId c = create("cx", "c", "{}", t0 + seconds(30));
  const RequestId d = create("cx", "d");
  RequestRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(3), row));  // b: lease to t0 + 3m
  ASSERT_EQ(row.id, b);
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(1), row));  // d: to t0 + 1m, before b's
  ASSERT_EQ(row.id, d);
  ASSERT_TRUE(store->claim_due(t0 + seconds(30), 1, seconds(150), row));  // a: to t0 + 3m, tied with b
  ASSERT_EQ(row.id, a);
  ASSERT_TRUE(store->claim_due(t0 + seconds(30), 1, minutes(1), row));  // c: to t0 + 1m30s
  ASSERT_EQ(row.id, c);
  EXPECT_EQ(store->next_due(), t0 + minutes(1));
  const Time late = t0 + minutes(10);
  for (RequestId expected : {d, c, a, b}) {
    ASSERT_TRUE(store->claim_due(late, 2, minutes(2), row));
    EXPECT_EQ(row.id, expected);
    EXPECT_EQ(row.lease_owner, 2u);
  }
  EXPECT_FALSE(store->claim_due(late, 2, minutes(2), row));
  EXPECT_EQ(store->next_due(), late + minutes(2));
}

TEST_P(StoreContract, CompletionAppendsTheAttemptAndSchedulesTheRetry) {
  const RequestId id = create("cx", "a");
  RequestRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), row));
  AttemptRow a{id, 1, 1, row.claim_token, t0, t0 + seconds(1), "http://x/v1", 7, NetError::none, 503, {}};
  Completion c = retry_at(t0 + seconds(1), t0 + seconds(9));
  c.attempt = &a;
  c.last_delay = seconds(8);
  ASSERT_TRUE(store->complete(id, row.claim_token, c));
  const auto r = store->get(id);
  EXPECT_EQ(r->status, Status::pending);
  EXPECT_EQ(r->attempts, 1u);
  EXPECT_EQ(r->due_at, t0 + seconds(9));
  EXPECT_EQ(r->last_delay, seconds(8));
  const auto attempts = store->attempts(id);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].resolved_url, "http://x/v1");
  EXPECT_EQ(attempts[0].serviceb_version, 7u);
  EXPECT_EQ(attempts[0].http_status, 503);
  EXPECT_EQ(store->next_due(), t0 + seconds(9));
  RequestRow again;
  EXPECT_FALSE(store->claim_due(t0 + seconds(8), 1, minutes(2), again));
  EXPECT_TRUE(store->claim_due(t0 + seconds(9), 1, minutes(2), again));
  EXPECT_EQ(again.attempts, 1u);
}

TEST_P(StoreContract, NextDueCoversPendingBlockedAndLeases) {
  EXPECT_FALSE(store->next_due().has_value());
  const RequestId id = create("cx", "a");
  EXPECT_EQ(store->next_due(), t0);
  RequestRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), row));
  EXPECT_EQ(store->next_due(), t0 + minutes(2));  // the lease expiry
  const Completion blocked{nullptr, Status::blocked, Reason::none, t0, t0 + seconds(30), t0, {}};
  ASSERT_TRUE(store->complete(id, row.claim_token, blocked));
  EXPECT_EQ(store->next_due(), t0 + seconds(30));
  EXPECT_EQ(store->get(id)->deferrals, 1u);
  EXPECT_EQ(store->get(id)->status, Status::blocked);
  ASSERT_TRUE(store->claim_due(t0 + seconds(30), 1, minutes(2), row));
  ASSERT_TRUE(store->complete(id, row.claim_token, Completion{nullptr, Status::dead_lettered, Reason::deadline,
                                                               t0 + seconds(31), {}, {}, {}}));
  EXPECT_FALSE(store->next_due().has_value());
}

TEST_P(StoreContract, AClaimOfUnblockedWorkLeavesTheBlockedWhereTheyAre) {
  const RequestId blocked = create("cx", "blocked");
  const RequestId later = create("cx", "later", "{}", t0 + seconds(10));
  RequestRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), row));
  ASSERT_EQ(row.id, blocked);
  ASSERT_TRUE(store->complete(blocked, row.claim_token,
                              Completion{nullptr, Status::blocked, Reason::none, t0, t0 + seconds(5), t0, {}}));
  // Due first, but blocked: an unblocked claim passes it by, and so does next_due.
  EXPECT_EQ(store->next_due(Claimable::unblocked), t0 + seconds(10));
  EXPECT_EQ(store->next_due(Claimable::all), t0 + seconds(5));
  EXPECT_FALSE(store->claim_due(t0 + seconds(9), 1, minutes(2), row, Claimable::unblocked));
  ASSERT_TRUE(store->claim_due(t0 + seconds(10), 1, minutes(2), row, Claimable::unblocked));
  EXPECT_EQ(row.id, later);
  EXPECT_EQ(store->get(blocked)->status, Status::blocked);
  // A claim of all work takes it, in its (due, id) place.
  ASSERT_TRUE(store->claim_due(t0 + seconds(10), 1, minutes(2), row, Claimable::all));
  EXPECT_EQ(row.id, blocked);
  // A lease that expires is rescued by either claim (in flight is not blocked, whatever it was).
  ASSERT_TRUE(store->claim_due(t0 + seconds(10) + minutes(2), 2, minutes(2), row, Claimable::unblocked));
  EXPECT_EQ(row.id, blocked);  // both leases end together: the lower id first
}

TEST_P(StoreContract, ReplayRevivesATerminalRequestAndKeepsItsHistory) {
  const RequestId id = create("cx", "a");
  RequestRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), row));
  AttemptRow a{id, 1, 1, row.claim_token, t0, t0 + seconds(1), "http://x", 1, NetError::none, 400, {}};
  Completion failed{&a, Status::failed, Reason::client_error, t0 + seconds(1), {}, {}, {}};
  ASSERT_TRUE(store->complete(id, row.claim_token, failed));
  EXPECT_EQ(store->replay(id + 1000, t0, t0), ReplayOutcome::not_found);
  const Time later = t0 + std::chrono::hours(30);
  EXPECT_EQ(store->replay(id, later, later + std::chrono::hours(24)), ReplayOutcome::replayed);
  EXPECT_EQ(store->replay(id, later, later), ReplayOutcome::not_terminal);
  const auto r = store->get(id);
  EXPECT_EQ(r->status, Status::pending);
  EXPECT_EQ(r->deadline_at, later + std::chrono::hours(24));
  EXPECT_EQ(r->replays, 1u);
  EXPECT_EQ(r->attempts, 1u);
  EXPECT_EQ(store->attempts(id).size(), 1u);
  ASSERT_TRUE(store->claim_due(later, 1, minutes(2), row));
  EXPECT_EQ(row.id, id);
}

TEST_P(StoreContract, ExpiredWorkIsClaimedByDeadlineAndOnlyWhenWaiting) {
  const Time t = Time{} + seconds(1);
  const RequestId a = store->create({"cx", "a", "{}", t, t + seconds(60)}).id;
  const RequestId b = store->create({"cx", "b", "{}", t, t + seconds(30)}).id;
  const RequestId c = store->create({"cx", "c", "{}", t, t + seconds(90)}).id;
  RequestRow row;
  EXPECT_EQ(store->next_expiry(), t + seconds(30));
  EXPECT_FALSE(store->claim_expired(t + seconds(30), 1, minutes(2), row));  // not past yet
  ASSERT_TRUE(store->claim_expired(t + seconds(61), 1, minutes(2), row));
  EXPECT_EQ(row.id, b);  // the longest expired first
  ASSERT_TRUE(store->claim_expired(t + seconds(61), 1, minutes(2), row));
  EXPECT_EQ(row.id, a);
  EXPECT_FALSE(store->claim_expired(t + seconds(61), 1, minutes(2), row));  // c has time left; a, b are in flight
  EXPECT_EQ(store->next_expiry(), t + seconds(90));  // only waiting requests expire
  EXPECT_GT(row.claim_token, 0u);
  (void)c;
}

TEST_P(StoreContract, CountsByStatus) {
  create("cx", "a");
  create("cx", "b");
  RequestRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), row));
  const StoreCounts c = store->counts();
  EXPECT_EQ(c.by_status[static_cast<int>(Status::pending)], 1u);
  EXPECT_EQ(c.by_status[static_cast<int>(Status::in_flight)], 1u);
}

TEST_P(StoreContract, ListsOneStatusPageByPageInIdOrder) {
  for (int i = 0; i < 5; ++i) create("cx", "r" + std::to_string(i));
  std::vector<RequestId> failed;
  for (int i = 0; i < 5; ++i) {
    RequestRow row;
    ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), row));
    const Completion c = i % 2 == 0 ? Completion{nullptr, Status::failed, Reason::no_url, t0, {}, {}, {}}
                                    : retry_at(t0, t0 + std::chrono::hours(1));
    ASSERT_TRUE(store->complete(row.id, row.claim_token, c));
    if (i % 2 == 0) failed.push_back(row.id);
  }
  EXPECT_EQ(store->with_status(Status::failed, 0, 10), failed);
  EXPECT_EQ(store->with_status(Status::failed, 0, 2), (std::vector<RequestId>{failed[0], failed[1]}));
  EXPECT_EQ(store->with_status(Status::failed, failed[1], 2), (std::vector<RequestId>{failed[2]}));
  EXPECT_EQ(store->with_status(Status::pending, 0, 10).size(), 2u);
  EXPECT_TRUE(store->with_status(Status::dead_lettered, 0, 10).empty());
}

// The notice outbox: written with the failure, claimed under a lease, sent again after it, gone
// once sent.
TEST_P(StoreContract, AFailureWritesItsNoticeInTheSameCompletion) {
  const RequestId a = create("cx", "a");
  const RequestId b = create("cx", "b");
  RequestRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), row));
  ASSERT_EQ(row.id, a);
  Completion failed{nullptr, Status::failed, Reason::no_url, t0 + seconds(1), {}, {}, {}};
  failed.notify = true;
  // A completion the fence refuses writes no notice either.
  EXPECT_FALSE(store->complete(a, row.claim_token + 100, failed));
  EXPECT_TRUE(store->notices().empty());
  EXPECT_FALSE(store->next_notice().has_value());
  ASSERT_TRUE(store->complete(a, row.claim_token, failed));
  // A failure not noticed (the dispatcher decides) writes none.
  ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), row));
  ASSERT_EQ(row.id, b);
  ASSERT_TRUE(store->complete(b, row.claim_token, Completion{nullptr, Status::failed, Reason::no_url, t0, {}, {}, {}}));
  const std::vector<Notice> outbox = store->notices();
  ASSERT_EQ(outbox.size(), 1u);
  const Notice& n = outbox.front();
  EXPECT_GE(n.id, 1u);
  EXPECT_EQ(n.request, a);
  EXPECT_EQ(n.life, 0u);
  EXPECT_EQ(n.sends, 0u);
  EXPECT_EQ(n.status, Status::failed);
  EXPECT_EQ(n.reason, Reason::no_url);
  EXPECT_EQ(n.at, t0 + seconds(1));
  EXPECT_EQ(store->next_notice(), t0 + seconds(1));
}

TEST_P(StoreContract, ANoticeIsLeasedSentAgainAfterTheLeaseAndGoneOnceSent) {
  std::vector<RequestId> ids;
  for (const char* rid : {"a", "b"}) {
    RequestRow row;
    create("cx", rid);
    ASSERT_TRUE(store->claim_due(t0, 1, minutes(2), row));
    Completion dead{nullptr, Status::dead_lettered, Reason::deadline, t0, {}, {}, {}};
    dead.notify = true;
    ASSERT_TRUE(store->complete(row.id, row.claim_token, dead));
    ids.push_back(row.id);
  }
  Notice first;
  Notice second;
  EXPECT_FALSE(store->claim_notice(t0 - seconds(1), minutes(1), first));  // not before its failure
  ASSERT_TRUE(store->claim_notice(t0, minutes(1), first));
  EXPECT_EQ(first.request, ids[0]);  // the oldest first
  EXPECT_EQ(first.sends, 1u);
  ASSERT_TRUE(store->claim_notice(t0, minutes(1), second));
  EXPECT_EQ(second.request, ids[1]);
  EXPECT_GT(second.id, first.id);
  Notice none;
  EXPECT_FALSE(store->claim_notice(t0 + seconds(59), minutes(1), none));  // both leased
  EXPECT_EQ(store->next_notice(), t0 + minutes(1));
  store->notice_sent(second.id);
  store->notice_sent(second.id);  // again: changes nothing
  // The first's sender died: after the lease it is claimed again, and counted.
  Notice again;
  ASSERT_TRUE(store->claim_notice(t0 + minutes(1), minutes(1), again));
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(again.sends, 2u);
  store->notice_sent(first.id);
  EXPECT_TRUE(store->notices().empty());
  EXPECT_FALSE(store->next_notice().has_value());
  // Ids are never reused, even once the outbox is empty.
  RequestRow row;
  ASSERT_TRUE(store->replay(ids[0], t0 + minutes(2), t0 + std::chrono::hours(48)) == ReplayOutcome::replayed);
  ASSERT_TRUE(store->claim_due(t0 + minutes(2), 1, minutes(2), row));
  Completion failed{nullptr, Status::failed, Reason::gone, t0 + minutes(2), {}, {}, {}};
  failed.notify = true;
  ASSERT_TRUE(store->complete(row.id, row.claim_token, failed));
  ASSERT_TRUE(store->claim_notice(t0 + minutes(2), minutes(1), again));
  EXPECT_GT(again.id, second.id);
  EXPECT_EQ(again.life, 1u);  // after one replay
}

INSTANTIATE_TEST_SUITE_P(
    Stores, StoreContract,
    ::testing::Values(StoreFactory{"memory", [] { return std::unique_ptr<Store>(new MemoryStore()); }},
                      // A retention longer than any test's span: it must change nothing.
                      StoreFactory{"memory_retention", [] { return std::unique_ptr<Store>(new MemoryStore(std::chrono::hours(100))); }},
                      StoreFactory{"sqlite", [] { return std::unique_ptr<Store>(new SqliteStore(":memory:")); }},
                      // As simulations run it: one long transaction, complete() in savepoints.
                      StoreFactory{"sqlite_batched", [] { return std::unique_ptr<Store>(new SqliteStore(":memory:", Durability::off)); }}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(MemoryStoreRetention, ForgetsATerminalRequestOnlyAfterTheRetention) {
  MemoryStore store(minutes(10));
  const Time t = Time{} + seconds(1);
  const Duration day = std::chrono::hours(24);
  const RequestId done = store.create({"cx", "done", "{}", t, t + day}).id;
  const RequestId open = store.create({"cx", "open", "{}", t, t + day}).id;
  RequestRow row;
  ASSERT_TRUE(store.claim_due(t, 1, minutes(2), row));
  ASSERT_EQ(row.id, done);
  ASSERT_TRUE(store.complete(done, row.claim_token, Completion{nullptr, Status::delivered, Reason::ok, t, t, t, {}}));
  // Just inside the retention a repeat is still a duplicate.
  EXPECT_EQ(store.create({"cx", "done", "{}", t + minutes(10) - seconds(1), t + day}).outcome, CreateOutcome::duplicate);
  EXPECT_EQ(store.rows_held(), 2u);
  // Past it the terminal request is gone; the open one stays, however old.
  const CreateResult again = store.create({"cx", "done", "{}", t + minutes(10), t + day});
  EXPECT_EQ(again.outcome, CreateOutcome::created);
  EXPECT_GT(again.id, open);
  EXPECT_FALSE(store.get(done).has_value());
  EXPECT_EQ(store.replay(done, t + minutes(10), t + day), ReplayOutcome::not_found);
  EXPECT_EQ(store.get(open)->status, Status::pending);
  EXPECT_EQ(store.rows_held(), 2u);  // open + the new one
  // The counts still include the forgotten request.
  EXPECT_EQ(store.counts().by_status[static_cast<int>(Status::delivered)], 1u);
  // The new request is claimable and its slot, reused, does not confuse the heaps.
  EXPECT_TRUE(store.claim_due(t + minutes(10), 1, minutes(2), row));
  EXPECT_TRUE(store.claim_due(t + minutes(10), 1, minutes(2), row));
  EXPECT_FALSE(store.claim_due(t + minutes(10), 1, minutes(2), row));
}

TEST(SqliteStore, AcknowledgedRequestsSurviveReopening) {
  const auto path = std::filesystem::temp_directory_path() / ("relaysim-store-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  const Time t = Time{} + seconds(1);
  RequestId id = 0;
  ClaimToken token = 0;
  {
    SqliteStore s(path.string(), Durability::full);
    id = s.create({"cx", "r", "{}", t, t + std::chrono::hours(24)}).id;
    RequestRow row;
    ASSERT_TRUE(s.claim_due(t, 1, minutes(2), row));
    token = row.claim_token;
  }  // the process "dies" here
  SqliteStore reopened(path.string(), Durability::full);
  const auto row = reopened.get(id);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->status, Status::in_flight);
  RequestRow rescued;
  ASSERT_TRUE(reopened.claim_due(t + minutes(2), 2, minutes(2), rescued));
  EXPECT_GT(rescued.claim_token, token);  // tokens keep increasing across restarts
  std::filesystem::remove(path);
  std::filesystem::remove(path.string() + "-wal");
  std::filesystem::remove(path.string() + "-shm");
}

TEST(SqliteStore, ABatchedStoreCommitsItsLastGroupWhenClosed) {
  const auto path = std::filesystem::temp_directory_path() / ("relaysim-batched-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  const Time t = Time{} + seconds(1);
  {
    SqliteStore s(path.string(), Durability::off);
    for (int i = 0; i < 5000; ++i) s.create({"cx", "r" + std::to_string(i), "{}", t, t + std::chrono::hours(24)});
  }
  SqliteStore reopened(path.string(), Durability::normal);
  EXPECT_EQ(reopened.counts().by_status[static_cast<int>(Status::pending)], 5000u);
  std::filesystem::remove(path);
  std::filesystem::remove(path.string() + "-wal");
  std::filesystem::remove(path.string() + "-shm");
}

// Claim tokens come from the database, not from a process's memory: two processes sharing one
// database never hand out the same token, and a store opened later goes on where they left off.
TEST(SqliteStore, TwoStoresOnOneDatabaseNeverHandOutTheSameToken) {
  const auto path = std::filesystem::temp_directory_path() / ("relaysim-tokens-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  const Time t = Time{} + seconds(1);
  std::vector<ClaimToken> tokens;
  {
    SqliteStore a(path.string(), Durability::normal);
    SqliteStore b(path.string(), Durability::normal);
    for (int i = 0; i < 10; ++i) a.create({"cx", "r" + std::to_string(i), "{}", t, t + std::chrono::hours(24)});
    RequestRow row;
    // Each claims in turn, and takes over the other's claims once their leases expire.
    for (int round = 0; round < 3; ++round) {
      const Time now = t + minutes(10 * round);
      for (int i = 0; i < 10; ++i) {
        SqliteStore& s = i % 2 == 0 ? a : b;
        ASSERT_TRUE(s.claim_due(now, i % 2 == 0 ? 1 : 2, minutes(5), row));
        tokens.push_back(row.claim_token);
      }
    }
  }
  SqliteStore later(path.string(), Durability::normal);
  RequestRow row;
  ASSERT_TRUE(later.claim_due(t + std::chrono::hours(1), 3, minutes(5), row));
  tokens.push_back(row.claim_token);
  for (std::size_t i = 1; i < tokens.size(); ++i) EXPECT_LT(tokens[i - 1], tokens[i]) << i;
  std::filesystem::remove(path);
  std::filesystem::remove(path.string() + "-wal");
  std::filesystem::remove(path.string() + "-shm");
}

TEST(SqliteStore, AnUnopenableDatabaseIsAClearError) {
  try {
    SqliteStore s("/nonexistent-dir/relaysim.db");
    FAIL() << "expected a StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/relaysim.db"), std::string::npos);
  }
}

}  // namespace
}  // namespace relaysim::webhook
