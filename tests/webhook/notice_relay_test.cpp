// The notice relay (model/webhook/notice_relay.h) on a real SQLite store: a failure's notice is
// written with the failure, survives a process killed before or while it is sent, and is sent at
// least once.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "model/webhook/notice_relay.h"
#include "model/webhook/sqlite_store.h"
#include "tests/manual_clock.h"

namespace relaysim::webhook {
namespace {

using std::chrono::seconds;

// Timers a test fires by hand: every timer due by the clock's time, in order.
struct ManualTimers final : Timers {
  std::map<std::uint64_t, std::pair<Time, TimerCallback>> pending;
  std::uint64_t next = 1;
  TimerId schedule_at(Time at, TimerCallback cb) override {
    pending.emplace(next, std::make_pair(at, std::move(cb)));
    return TimerId{next++};
  }
  void cancel(TimerId id) override { pending.erase(id.value); }
  void fire(Time now) {
    for (auto it = pending.begin(); it != pending.end();) {
      if (it->second.first > now) {
        ++it;
        continue;
      }
      TimerCallback cb = std::move(it->second.second);
      pending.erase(it);
      cb();
      it = pending.begin();
    }
  }
};

// A tenant's side: keeps what it was told; answers at once unless told to hold the answers (the
// process dies before it hears that the send went out).
struct Tenant final : NoticeChannel {
  std::vector<Notice> heard;
  std::vector<NoticeCallback> unanswered;
  bool answer = true;
  void tell(const Notice& n, NoticeCallback done) override {
    heard.push_back(n);
    if (answer) {
      done(true);
    } else {
      unanswered.push_back(std::move(done));
    }
  }
};

// One process: its store connection and its relay. Destroying it is a kill -9: nothing it held in
// memory is finished.
struct Process {
  Process(const std::string& path, const PlatformConfig& config, testing::ManualClock& clock, ManualTimers& timers,
          Tenant& tenant, Events& events)
      : store(path), relay(1, config, store, clock, timers, tenant, events) {}
  SqliteStore store;
  NoticeRelay relay;
};

class NoticeRelayTest : public ::testing::Test {
 protected:
  NoticeRelayTest() {
    remove_files();
    config.lease = seconds(30);
    clock.t = Time{} + seconds(100);
  }
  ~NoticeRelayTest() override { remove_files(); }
  void remove_files() const {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  }

  // Creates a request and dead-letters it, with its notice, as the dispatcher does.
  RequestId dead_letter(SqliteStore& store, const char* rid) {
    const CreateResult c = store.create({"cx", rid, "{}", clock.t, clock.t + seconds(1)});
    RequestRow row;
    EXPECT_TRUE(store.claim_due(clock.t, 1, config.lease, row));
    Completion dead{nullptr, Status::dead_lettered, Reason::deadline, clock.t, clock.t, clock.t, {}};
    dead.notify = true;
    EXPECT_TRUE(store.complete(c.id, row.claim_token, dead));
    return c.id;
  }

  // One file per test: ctest runs the tests of this file at once, in processes of their own.
  std::string path = ::testing::TempDir() + "notice-relay-" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
  PlatformConfig config;
  testing::ManualClock clock;
  ManualTimers timers;
  Tenant tenant;
  Events events;
};

TEST_F(NoticeRelayTest, SendsANoticeAtOnceAndRemovesIt) {
  Process p(path, config, clock, timers, tenant, events);
  const RequestId id = dead_letter(p.store, "a");
  p.relay.pump();
  ASSERT_EQ(tenant.heard.size(), 1u);
  EXPECT_EQ(tenant.heard[0].request, id);
  EXPECT_EQ(tenant.heard[0].sends, 1u);
  EXPECT_TRUE(p.store.notices().empty());
  EXPECT_EQ(p.relay.out(), 0u);
}

// Killed after the failure's commit, before the notice was sent: the next process sends it.
TEST_F(NoticeRelayTest, ANoticeSurvivesAKillBetweenItsFailuresCommitAndItsSend) {
  RequestId id = 0;
  {
    Process killed(path, config, clock, timers, tenant, events);
    id = dead_letter(killed.store, "a");
  }
  EXPECT_TRUE(tenant.heard.empty());
  Process next(path, config, clock, timers, tenant, events);
  next.relay.pump();
  ASSERT_EQ(tenant.heard.size(), 1u);
  EXPECT_EQ(tenant.heard[0].request, id);
  EXPECT_EQ(tenant.heard[0].sends, 1u);
  EXPECT_TRUE(next.store.notices().empty());
}

// Killed after sending, before removing it: sent again once the lease expires (at least once),
// counted as a resend; not before.
TEST_F(NoticeRelayTest, ANoticeSentByAProcessKilledBeforeRemovingItIsSentAgainAfterTheLease) {
  {
    Process killed(path, config, clock, timers, tenant, events);
    dead_letter(killed.store, "a");
    tenant.answer = false;
    killed.relay.pump();
    ASSERT_EQ(tenant.heard.size(), 1u);
    EXPECT_EQ(killed.relay.out(), 1u);
  }
  timers.pending.clear();  // the killed process's timers and callbacks died with it
  tenant.unanswered.clear();
  tenant.answer = true;
  Process next(path, config, clock, timers, tenant, events);
  next.relay.pump();
  EXPECT_EQ(tenant.heard.size(), 1u);  // still leased
  // The relay sleeps until the lease expires, and no longer.
  clock.t += config.lease - seconds(1);
  timers.fire(clock.t);
  EXPECT_EQ(tenant.heard.size(), 1u);
  clock.t += seconds(1);
  timers.fire(clock.t);
  ASSERT_EQ(tenant.heard.size(), 2u);
  EXPECT_EQ(tenant.heard[1].id, tenant.heard[0].id);
  EXPECT_EQ(tenant.heard[1].sends, 2u);
  EXPECT_TRUE(next.store.notices().empty());
}

// No more than kMaxOut sends wait for their answers; the rest wait in the outbox, and go as
// answers come.
TEST_F(NoticeRelayTest, BoundsTheSendsWaitingForAnAnswer) {
  Process p(path, config, clock, timers, tenant, events);
  tenant.answer = false;
  for (std::uint32_t i = 0; i < NoticeRelay::kMaxOut + 3; ++i) dead_letter(p.store, ("r" + std::to_string(i)).c_str());
  p.relay.pump();
  EXPECT_EQ(tenant.heard.size(), NoticeRelay::kMaxOut);
  EXPECT_EQ(p.relay.out(), NoticeRelay::kMaxOut);
  EXPECT_EQ(p.store.notices().size(), NoticeRelay::kMaxOut + 3);
  NoticeCallback first = std::move(tenant.unanswered.front());
  first(true);  // one answer: a place frees, and one more goes
  EXPECT_EQ(tenant.heard.size(), NoticeRelay::kMaxOut + 1);
  EXPECT_EQ(p.store.notices().size(), NoticeRelay::kMaxOut + 2);
}

}  // namespace
}  // namespace relaysim::webhook
