// The generic run loop, on a small webhook scenario: stop requests, running out of memory, the
// event limit, and a run cut short still leaving a report.
#include <gtest/gtest.h>

#include <new>

#include "sim/run.h"
#include "sim/system.h"
#include "sim/loader.h"
#include "sim/webhook/spec.h"

namespace relaysim::sim {
namespace {

Scenario quickstart() { return load_scenario(std::string(RELAYSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml"); }

TEST(Run, AStopRequestEndsTheRunWithAPartialReportThatIsNotJudged) {
  RunOptions o;
  int asked = 0;
  o.should_stop = [&asked] { return ++asked > 3; };
  const RunResult r = run_scenario(quickstart(), std::move(o));
  EXPECT_EQ(r.ending, Ending::interrupted);
  EXPECT_FALSE(r.judged());
  EXPECT_FALSE(r.pass());
  ASSERT_NE(r.report, nullptr);
  EXPECT_LT(r.end, Time{} + quickstart().duration);
}

TEST(Run, RunningOutOfMemoryEndsTheRunWithAReportNotACrash) {
  RunOptions o;
  int calls = 0;
  o.progress = [&calls](Time, std::uint64_t) {
    if (++calls == 5) throw std::bad_alloc();
  };
  const RunResult r = run_scenario(quickstart(), std::move(o));
  EXPECT_EQ(r.ending, Ending::out_of_memory);
  EXPECT_NE(r.failure.find("ran out of memory"), std::string::npos);
  ASSERT_NE(r.report, nullptr);
  EXPECT_FALSE(r.pass());
}

TEST(Run, TheEventLimitStopsALivelockAndTheDefaultIsFarAboveTheLoad) {
  RunOptions o;
  o.max_events = 1000;
  const RunResult r = run_scenario(quickstart(), std::move(o));
  EXPECT_TRUE(r.hit_event_limit());
  EXPECT_FALSE(r.pass());
  const RunResult normal = run_scenario(quickstart());
  EXPECT_GE(normal.event_limit, 100'000'000u);
  EXPECT_LT(normal.events, normal.event_limit / 100);
  EXPECT_TRUE(normal.pass());
}

TEST(Run, TheDefaultEventLimitCountsTheTimersThatFireWithoutLoad) {
  // An outbox's leaders scan every 100ms whether or not anything is committed: a year of it is
  // hundreds of millions of scans, which the limit must not take for a livelock.
  Scenario s = load_scenario(std::string(RELAYSIM_SOURCE_DIR) + "/scenarios/outbox-quickstart.yaml");
  const std::uint64_t short_run = default_event_limit(s);
  s.duration = std::chrono::hours(24 * 365);
  const std::uint64_t year = default_event_limit(s);
  const double scans = 365.0 * 24 * 3600 / 0.1;  // one shard's leader alone
  EXPECT_GT(static_cast<double>(year), 3 * scans);
  EXPECT_GT(year, short_run);
}

TEST(Run, TheDefaultEventLimitCountsServiceBDeferralsThroughAnOutage) {
  // Requests blocked on ServiceB are deferred by dependency_backoff until it comes back: with a
  // fixed 1ms backoff through a two-hour outage at 20/s, about 144 000 requests are each deferred
  // some 3.6 million times. That is work, not a livelock, and the limit must see it.
  Scenario s = load_scenario(std::string(RELAYSIM_SOURCE_DIR) + "/scenarios/serviceb-outage.yaml");
  const std::uint64_t backing_off = default_event_limit(s);
  BackoffPolicy& b = webhook::spec_of(s).platform.dependency_backoff;
  b.kind = BackoffKind::fixed;
  b.initial = std::chrono::milliseconds(1);
  b.jitter = Jitter::none;
  const double deferrals = 20.0 * 7200 * 3600 / 0.001;
  EXPECT_GT(static_cast<double>(default_event_limit(s)), deferrals);
  EXPECT_LT(static_cast<double>(backing_off), deferrals / 1000);
}

TEST(Run, EverySystemHasAViolationsMetricForEachOfItsInvariants) {
  // Derived from the invariants' table, so a new invariant (as lifecycle was) cannot go without.
  for (const System* system : systems()) {
    for (const InvariantInfo& i : system->invariants()) {
      const std::string name = std::string(i.id.substr(i.id.find('-') + 1)) + "_violations";
      const std::optional<MetricRef> m = find_metric(system->metrics(), name);
      ASSERT_TRUE(m) << system->name() << ": " << name;
      EXPECT_EQ(system->metrics()[m->index].meaning, std::string(i.id) + " violations");
    }
  }
}

TEST(Run, AStopRequestIsHeardInsideAHugeBurst) {
  // Every call of a burst happens at one moment; made in one event, a million of them would keep
  // the loop from asking for seconds. Asked at its first look, the run stops long before the end.
  const Scenario s = parse_scenario(R"(name: burst
duration: 1m
system: webhook
webhook:
  world:
    endpoints:
      - {count: 10}
  load:
    - {burst: 1000000, at: 0s}
)",
                                    "burst.yaml");
  RunOptions o;
  o.should_stop = [] { return true; };
  const RunResult r = run_scenario(s, std::move(o));
  EXPECT_EQ(r.ending, Ending::interrupted);
  const auto ingested = find_metric(r.system().metrics(), "ingested");
  ASSERT_TRUE(ingested.has_value());
  EXPECT_GT(r.value(ingested->index), 0.0);
  EXPECT_LT(r.value(ingested->index), 100'000.0);
}

}  // namespace
}  // namespace relaysim::sim
