#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/webhook/memory_store.h"
#include "model/webhook/node.h"
#include "model/webhook/url_resolver.h"
#include "tests/manual_clock.h"

namespace relaysim::webhook {
namespace {

using std::chrono::seconds;

using testing::ManualClock;

// A ServiceB whose answers the test gives by hand.
struct ManualDirectory final : UrlDirectory {
  std::vector<std::pair<std::string, LookupCallback>> calls;
  void lookup(std::string_view cxid, Duration, LookupCallback done) override {
    calls.emplace_back(std::string(cxid), std::move(done));
  }
  void answer(std::size_t i, LookupStatus s, std::string_view url = {}, std::uint64_t version = 0) {
    calls[i].second(LookupResult{s, url, version});
  }
};

struct ResolverTest : ::testing::Test {
  ManualClock clock;
  ManualDirectory directory;
  Events events;
  ResolverConfig config{seconds(60), 100, seconds(2), BreakerConfig{seconds(10), 3, 0.5, seconds(30), 1}};
  UrlResolver resolver{0, config, directory, clock, events};
  std::vector<Resolution> got;
  std::vector<std::string> urls;

  void resolve(std::string_view cxid) {
    resolver.resolve(cxid, [this](const Resolution& r) {
      got.push_back(r);
      urls.emplace_back(r.url);
    });
  }
};

TEST_F(ResolverTest, CachesAFoundUrlForTheTtlOnly) {
  resolve("cx1");
  ASSERT_EQ(directory.calls.size(), 1u);
  directory.answer(0, LookupStatus::found, "http://a/v1", 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(got[0].cache_hit);
  clock.t += seconds(59);
  resolve("cx1");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[1].cache_hit);
  EXPECT_EQ(urls[1], "http://a/v1");
  EXPECT_EQ(directory.calls.size(), 1u);
  clock.t += seconds(1);  // 60 s after the lookup was sent: expired
  resolve("cx1");
  EXPECT_EQ(directory.calls.size(), 2u);
}

// ServiceB answers slowly and the URL changes while the answer is on its way: the answer was
// true when the lookup was sent, so the entry ages from then — served until sent + TTL, never
// until answered + TTL.
TEST_F(ResolverTest, ASlowAnswerAgesFromWhenTheLookupWasSent) {
  resolve("cx1");
  clock.t += seconds(50);  // the answer comes 50 s later (ServiceB moved the URL to v2 meanwhile)
  directory.answer(0, LookupStatus::found, "http://a/v1", 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(urls[0], "http://a/v1");
  clock.t = Time{} + seconds(59);  // sent + 59 s: still young
  resolve("cx1");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[1].cache_hit);
  clock.t = Time{} + seconds(60);  // sent + TTL: stale, though answered only 10 s ago
  resolve("cx1");
  EXPECT_EQ(got.size(), 2u) << "a stale entry was served";
  ASSERT_EQ(directory.calls.size(), 2u);
  directory.answer(1, LookupStatus::found, "http://a/v2", 2);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_FALSE(got[2].cache_hit);
  EXPECT_EQ(urls[2], "http://a/v2");
}

TEST_F(ResolverTest, UnknownCxidIsNotFound) {
  resolve("nobody");
  directory.answer(0, LookupStatus::not_found);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].status, ResolveStatus::not_found);
}

TEST_F(ResolverTest, AnOpenBreakerAnswersUnavailableWithoutCallingServiceB) {
  for (int i = 0; i < 3; ++i) {
    resolve("cx" + std::to_string(i));
    directory.answer(directory.calls.size() - 1, LookupStatus::error);
  }
  ASSERT_EQ(resolver.breaker().state(), BreakerState::open);
  const std::size_t calls = directory.calls.size();
  resolve("cx9");
  EXPECT_EQ(directory.calls.size(), calls);
  EXPECT_EQ(got.back().status, ResolveStatus::unavailable);
  // After open_for, one probe goes through; its success closes the breaker.
  clock.t += seconds(30);
  resolve("cx9");
  ASSERT_EQ(directory.calls.size(), calls + 1);
  directory.answer(calls, LookupStatus::found, "http://b/v1", 1);
  EXPECT_EQ(resolver.breaker().state(), BreakerState::closed);
}

// A live clock moves on between any two readings; this one by a microsecond at every reading.
struct TickingClock final : Clock {
  mutable Time t{};
  Time now() const override { return t += std::chrono::microseconds(1); }
};
struct NoTimers final : Timers {
  TimerId schedule_at(Time, TimerCallback) override { return TimerId{1}; }
  void cancel(TimerId) override {}
};
struct SilentEndpoints final : HttpClient {
  void send(const HttpRequest&, Duration, HttpCallback) override {}  // the attempts stay in flight
};
// When each attempt started and when the URL it used was decided.
struct NoticesHeard final : NoticeChannel {
  void tell(const Notice&, NoticeCallback done) override { done(true); }
};
struct AttemptTimes final : SinkFor<AttemptStarted>, SinkFor<UrlLookedUp>, SinkFor<LookupFinished> {
  Time decided{};
  std::vector<std::pair<Time, Time>> attempts;  // (started, decided)
  void on(const UrlLookedUp& e) override {
    if (e.cache_hit) decided = e.at;
  }
  void on(const LookupFinished& e) override { decided = e.at; }
  void on(const AttemptStarted& e) override { attempts.emplace_back(e.at, decided); }
};

// An attempt starts at the moment its URL was decided, not at a later reading of the clock. Under
// a live clock, the difference once made `relaysim judge` find W-url broken under CPU load: a
// lookup that took longer than the TTL (the process stalled 1 s with the answer waiting) may be
// used only at the moment it arrives, and the attempt was stamped microseconds later; an entry
// taken from the cache just before its TTL ran out could likewise be stamped after it.
TEST(Dispatcher, AnAttemptStartsWhenItsUrlWasDecided) {
  TickingClock clock;
  NoTimers timers;
  Rng rng(1);
  SilentEndpoints endpoints;
  ManualDirectory directory;
  MemoryStore store;
  Events events;
  NoticesHeard notices;
  AttemptTimes times;
  events.attach(times);
  PlatformConfig config;
  config.concurrency_per_pod = 4;
  config.url_cache_ttl = seconds(1);
  Node node(1, config, NodePorts{clock, timers, rng, endpoints, directory, store, events, notices});
  node.start();
  ASSERT_EQ(node.ingest().create("cx1", "r1", "{}").status, IngestStatus::created);
  node.nudge();
  ASSERT_EQ(directory.calls.size(), 1u);
  clock.t += seconds(2);  // ServiceB answers after twice the TTL
  directory.answer(0, LookupStatus::found, "http://a/v1", 1);
  ASSERT_EQ(node.ingest().create("cx1", "r2", "{}").status, IngestStatus::created);
  node.nudge();  // the entry aged from the first lookup's sending: a second lookup
  ASSERT_EQ(directory.calls.size(), 2u);
  directory.answer(1, LookupStatus::found, "http://a/v1", 1);
  ASSERT_EQ(node.ingest().create("cx1", "r3", "{}").status, IngestStatus::created);
  node.nudge();  // from the cache
  ASSERT_EQ(times.attempts.size(), 3u);
  for (const auto& [started, decided] : times.attempts) {
    EXPECT_EQ(to_ns(started), to_ns(decided)) << "an attempt stamped after the moment its URL was decided";
  }
}

}  // namespace
}  // namespace relaysim::webhook
