// The backlog the spine samples on every run, and the run metrics read from it: the peak, the
// mean, and the drain after each fault — on made-up samples, where the answer is known, and on
// whole runs of every system.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "sim/report/backlog.h"
#include "sim/report/open_work.h"
#include "sim/run.h"
#include "sim/loader.h"
#include "tests/scenario_helpers.h"

namespace relaysim::sim {
namespace {

using std::chrono::seconds;

Time at(int s) { return Time{} + seconds(s); }

// A trace of an hour, one sample a second: `level` open, except `high` from `from` to `to`.
BacklogTrace trace(std::uint64_t level, std::uint64_t high, int from, int to) {
  BacklogTrace t(std::chrono::hours(1));
  EXPECT_EQ(t.step(), seconds(1));
  for (int s = 1; s <= 3600; ++s) {
    EXPECT_EQ(t.next(), at(s));
    t.take(s >= from && s < to ? high : level, 0);
  }
  return t;
}

TimelineEvent fault(int from, int to, const char* subject = "serviceb") { return {at(from), seconds(to - from), "outage", subject, "", true}; }

TEST(Backlog, PeakAndMeanAreOverEverySample) {
  const BacklogTrace t = trace(10, 100, 1000, 1360);  // a tenth of the hour at 100
  EXPECT_EQ(t.peak(), 100u);
  EXPECT_DOUBLE_EQ(t.mean(), 0.9 * 10 + 0.1 * 100);
}

TEST(Backlog, ADrainIsFromTheFaultsEndUntilTheLevelBeforeIt) {
  // The outage is 600..900; the backlog stays high until 1500.
  const BacklogTrace t = trace(10, 80, 600, 1500);
  const auto drains = t.drains({fault(600, 900)});
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_EQ(drains[0].fault_start, at(600));
  EXPECT_EQ(drains[0].fault_end, at(900));
  EXPECT_DOUBLE_EQ(drains[0].level, 10);
  EXPECT_EQ(drains[0].peak, 80u);
  EXPECT_EQ(drains[0].drained, at(1500));
  EXPECT_DOUBLE_EQ(drains[0].seconds(), 600);
  EXPECT_EQ(drains[0].what, "outage serviceb");
}

TEST(Backlog, WhatIsNotAFaultOrHasNoLevelToComeBackToIsLeftOut) {
  const BacklogTrace t = trace(10, 80, 600, 1500);
  TimelineEvent breaker = fault(600, 900);
  breaker.fault = false;
  EXPECT_TRUE(t.drains({breaker}).empty()) << "a breaker's open window is the system's doing, not a fault";
  EXPECT_TRUE(t.drains({fault(0, 900)}).empty()) << "a fault from the start has no level before it";
  EXPECT_TRUE(t.drains({fault(3000, 4000)}).empty()) << "a fault that outlasts the run has not ended";
  TimelineEvent forever = fault(600, 900);
  forever.length = kForever;
  EXPECT_TRUE(t.drains({forever}).empty());
}

// A trace of `run`, read each second (each step in a longer run) as the spine reads it: ten
// pieces of work finish a step, `late(s)` late at second s (zero: nothing finishes then), and
// `open(s)` are open. `warm_at`: the system measures from zero after that second (0: no warm-up).
template <class Late, class Open>
BacklogTrace latency_trace_of(Duration run, Late late, Open open, int warm_at = 0) {
  BacklogTrace t(run);
  LatencyHistogram so_far;
  for (Time now = t.next(); now <= Time{} + run; now = t.next()) {
    const auto s = static_cast<int>(std::chrono::duration_cast<seconds>(now - Time{}).count());
    const Duration d = late(s);
    for (int i = 0; i < 10 && d > Duration{}; ++i) so_far.add(d + std::chrono::milliseconds(i));
    t.take(open(s), 0);
    if (t.latency_due()) t.take_latency(so_far);
    if (s == warm_at) {
      t.restart_latency(so_far);
      so_far = LatencyHistogram{};
    }
  }
  return t;
}

// An hour's trace whose work finishes `quick` (to 9 ms more) late, except what finishes in
// (from, to]: `slow` late (0: nothing finishes then).
BacklogTrace latency_trace(Duration quick, Duration slow, int from, int to, int warm_at = 0) {
  return latency_trace_of(
      std::chrono::hours(1), [&](int s) { return s > from && s <= to ? slow : quick; },
      [&](int s) -> std::uint64_t { return s > from && s <= to ? 80 : 10; }, warm_at);
}

TEST(Backlog, TheLatencyRecoversInTheFirstWholeMinuteAfterTheFaultBackAtItsLevel) {
  using std::chrono::milliseconds;
  // Nothing finishes during the outage 1000..1360; what it held finishes 30 s late until 1500.
  const BacklogTrace t = latency_trace(milliseconds(10), seconds(30), 1360, 1500);
  auto drains = t.drains({fault(1000, 1360)});
  ASSERT_EQ(drains.size(), 1u);
  ASSERT_TRUE(drains[0].latency_level.has_value());
  // The worst minute before: ten durations a second of 10..19 ms, so its p99 lies in 19 ms's bucket.
  EXPECT_NEAR(to_seconds(*drains[0].latency_level), 0.019, 0.019 * LatencyHistogram::kResolution);
  // Minutes 1380..1440 and 1440..1500 finish slow work; 1500..1560 is back.
  EXPECT_EQ(drains[0].latency_back, at(1560));
  EXPECT_DOUBLE_EQ(drains[0].latency_seconds(), 200);

  // The minute 1320..1380 looks quick (nothing slow finishes in it) but began in the fault.
  const BacklogTrace quiet = latency_trace(milliseconds(10), Duration{}, 1000, 1370);
  drains = quiet.drains({fault(1000, 1370)});
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_EQ(drains[0].latency_back, at(1440));

  // Slow to the end: never back.
  const BacklogTrace never = latency_trace(milliseconds(10), seconds(30), 1360, 3600);
  drains = never.drains({fault(1000, 1360)});
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_EQ(drains[0].latency_back, kTimeNever);
  EXPECT_TRUE(std::isinf(drains[0].latency_seconds()));
  // A fault with nothing finished in the five minutes before it has no level: no figure.
  const BacklogTrace idle = latency_trace(milliseconds(10), Duration{}, 0, 1000);
  drains = idle.drains({fault(1000, 1360)});
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_FALSE(drains[0].latency_level.has_value());
  EXPECT_TRUE(std::isnan(drains[0].latency_seconds()));

  // A warm-up that ends mid-minute loses nothing of that minute: the same figures.
  const BacklogTrace warmed = latency_trace(milliseconds(10), seconds(30), 1360, 1500, 1530);
  drains = warmed.drains({fault(1000, 1360)});
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_EQ(drains[0].latency_back, at(1560));
}

TEST(Backlog, TheLatencysRecoveryIsSoughtBeforeTheNextFaultAndInLongRunsToo) {
  using std::chrono::milliseconds;
  // Two episodes (the backlog is back by 1400): after the first, work finishes slow, except for
  // a quick minute inside the second fault, which is not the first's recovery.
  const auto late = [](int s) -> Duration {
    if (s > 1000 && s <= 1360) return Duration{};
    return s > 1360 && s <= 3000 && !(s > 2040 && s <= 2100) ? Duration{seconds(30)} : Duration{milliseconds(10)};
  };
  const BacklogTrace t = latency_trace_of(std::chrono::hours(1), late, [](int s) -> std::uint64_t { return s > 1000 && s <= 1400 ? 80 : 10; });
  const auto drains = t.drains({fault(1000, 1360), fault(2000, 2100, "redis")});
  ASSERT_EQ(drains.size(), 2u);
  EXPECT_EQ(drains[0].latency_back, kTimeNever) << "slow until the next fault began";
  // The second began while the first's slow work still finished: that is its level, so it is
  // back in its first whole minute after.
  EXPECT_EQ(drains[1].latency_back, at(2160));

  // A week-long run reads its latency every 60 steps of 6.048 s: a fault at any time still has
  // the long minute that ends last before it for a level.
  const auto week = std::chrono::hours(24 * 7);
  const BacklogTrace long_run = latency_trace_of(
      week, [](int s) -> Duration { return s > 100'000 && s <= 100'500 ? Duration{} : Duration{milliseconds(10)}; },
      [](int) -> std::uint64_t { return 10; });
  const auto long_drains = long_run.drains({fault(100'000, 100'500)});
  ASSERT_EQ(long_drains.size(), 1u);
  ASSERT_TRUE(long_drains[0].latency_level.has_value());
  EXPECT_NEAR(to_seconds(*long_drains[0].latency_level), 0.019, 0.019 * LatencyHistogram::kResolution);
  // Back in the first long minute that begins after the fault.
  const Duration minute = BacklogTrace::step_for(week) * static_cast<std::int64_t>(BacklogTrace::kLatencySteps);
  EXPECT_GT(long_drains[0].latency_back, at(100'500));
  EXPECT_LE(long_drains[0].latency_back, at(100'500) + 2 * minute);
}

TEST(Backlog, AFaultBeforeTheLastDrainedJoinsItsEpisode) {
  // Two outages 600..700 and 1000..1100, the backlog high throughout 600..1500: one episode.
  const BacklogTrace t = trace(10, 80, 600, 1500);
  const auto drains = t.drains({fault(1000, 1100, "redis"), fault(600, 700)});
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_EQ(drains[0].fault_start, at(600));
  EXPECT_EQ(drains[0].fault_end, at(1100));
  EXPECT_DOUBLE_EQ(drains[0].seconds(), 400);
  EXPECT_EQ(drains[0].what, "outage serviceb, outage redis");
  // Far apart, each is its own.
  EXPECT_EQ(t.drains({fault(600, 700), fault(2000, 2100)}).size(), 2u);
}

TEST(Backlog, ABacklogThatNeverComesBackNeverDrained) {
  const BacklogTrace t = trace(10, 80, 600, 4000);
  const auto drains = t.drains({fault(600, 900)});
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_FALSE(drains[0].drained_by_end());
  EXPECT_TRUE(std::isinf(drains[0].seconds()));
  RunFigures f;
  f.drains = drains;
  EXPECT_TRUE(std::isinf(f.drain_time_s()));
  EXPECT_EQ(format_value(Unit::seconds, f.drain_time_s()), "never");
  EXPECT_TRUE(std::isnan(RunFigures{}.drain_time_s())) << "no fault, no drain time";
}

TEST(Backlog, WorkStuckInAGroupDownForGoodIsLeftOutOfTheDrain) {
  // 10 open and a dead group's 1 more every 10 s (never finished); the outage 600..900 raises the
  // rest to 80 until 1500. With the stuck work counted, the backlog never gets back to its level.
  BacklogTrace t(std::chrono::hours(1));
  for (int s = 1; s <= 3600; ++s) {
    const std::uint64_t stuck = static_cast<std::uint64_t>(s / 10);
    t.take((s >= 600 && s < 1500 ? 80 : 10) + stuck, stuck);
  }
  const auto drains = t.drains({fault(600, 900)});
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_DOUBLE_EQ(drains[0].level, 10);
  EXPECT_EQ(drains[0].peak, 80u);
  EXPECT_EQ(drains[0].drained, at(1500));
  EXPECT_EQ(drains[0].stuck, 150u) << "what was left out, as the backlog drained";
  EXPECT_EQ(t.peak(), 10u + 360) << "the run's peak is of everything open: the stuck work at the end";
}

TEST(Backlog, EachGroupDrainsToItsOwnLevelAndOneDownForGoodIsNotSought) {
  // Three groups: `fast` 10 open, 50 from 600 s until 1000; `slow` 5 open, 30 from 600 s until
  // 2000; `dead` down for good, one more every 10 s. The outage is 600..900.
  BacklogTrace t(std::chrono::hours(1));
  t.trace_groups(3, {false, false, true});
  ASSERT_TRUE(t.groups_traced());
  for (int s = 1; s <= 3600; ++s) {
    const std::uint64_t fast = s >= 600 && s < 1000 ? 50 : 10, slow = s >= 600 && s < 2000 ? 30 : 5;
    const auto dead = static_cast<std::uint64_t>(s / 10);
    t.take(fast + slow + dead, dead);
    const std::uint64_t open[] = {fast, slow, dead};
    t.take_groups(open);
  }
  const auto drains = t.drains({fault(600, 900)});
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_EQ(drains[0].drained, at(2000)) << "the whole is back when its slowest part is";
  ASSERT_EQ(drains[0].groups.size(), 3u);
  const GroupDrain& fast = drains[0].groups[0];
  const GroupDrain& slow = drains[0].groups[1];
  const GroupDrain& dead = drains[0].groups[2];
  EXPECT_EQ(fast.group, 0u);
  EXPECT_DOUBLE_EQ(fast.level, 10);
  EXPECT_EQ(fast.peak, 50u);
  EXPECT_EQ(fast.drained, at(1000));
  EXPECT_EQ(slow.group, 1u);
  EXPECT_DOUBLE_EQ(slow.level, 5);
  EXPECT_EQ(slow.peak, 30u);
  EXPECT_EQ(slow.drained, at(2000));
  EXPECT_TRUE(dead.down_for_good);
  EXPECT_FALSE(dead.drained_by_end()) << "a group down for good has no drain to seek";
  EXPECT_EQ(dead.peak, 200u) << "its peak over the episode, until the whole drained at 2000 s";

  // `quiet` (a fourth group in a second trace) stays at 20, give or take one: unaffected.
  BacklogTrace q(std::chrono::hours(1));
  q.trace_groups(2, {});
  for (int s = 1; s <= 3600; ++s) {
    const std::uint64_t loud = s >= 600 && s < 1000 ? 50 : 10, quiet = 20 + static_cast<std::uint64_t>(s % 3 == 0);
    q.take(loud + quiet, 0);
    const std::uint64_t open[] = {loud, quiet};
    q.take_groups(open);
  }
  const auto quiet_drains = q.drains({fault(600, 900)});
  ASSERT_EQ(quiet_drains.size(), 1u);
  EXPECT_TRUE(quiet_drains[0].groups[0].affected);
  EXPECT_FALSE(quiet_drains[0].groups[1].affected) << "a group the fault did not raise is not said to drain";
  EXPECT_FALSE(quiet_drains[0].groups[1].drained_by_end());
  EXPECT_EQ(quiet_drains[0].groups[1].peak, 21u) << "read over the episode alone";

  // One group is the whole; more than kGroupsApart are not kept apart.
  BacklogTrace one(std::chrono::hours(1)), many(std::chrono::hours(1));
  one.trace_groups(1, {});
  many.trace_groups(kGroupsApart + 1, {});
  EXPECT_FALSE(one.groups_traced());
  EXPECT_FALSE(many.groups_traced());
}

TEST(Backlog, AGroupsLevelLeavesOutAnEarlierFault) {
  // `a` is 100 open, but 0 during its own outage 300..500 (its work went elsewhere); a second
  // outage 600..700 raises it to 300 until 800. Its level before the second is 100, not the
  // mean of 300..599 with the first outage in it.
  BacklogTrace t(std::chrono::hours(1));
  t.trace_groups(2, {});
  for (int s = 1; s <= 3600; ++s) {
    const std::uint64_t a = s >= 300 && s < 500 ? 0 : s >= 600 && s < 800 ? 300 : 100, b = 50;
    t.take(a + b, 0);
    const std::uint64_t open[] = {a, b};
    t.take_groups(open);
  }
  const auto drains = t.drains({fault(300, 500, "a"), fault(600, 700, "b")});
  ASSERT_EQ(drains.size(), 2u);
  EXPECT_DOUBLE_EQ(drains[1].groups[0].level, 100);
  EXPECT_EQ(drains[1].groups[0].drained, at(800));
  EXPECT_FALSE(drains[0].groups[0].affected) << "its own outage lowered it";
}

TEST(OpenWork, CountsEachGroupsOpenWorkAsItMovesAndEnds) {
  OpenWork w(2);
  w.open(0, 0);
  w.open(1, 1);
  w.open(2, GroupTally::kNone);  // an SMS message not yet submitted
  w.open(5, 1);                   // ids need not come in a row
  EXPECT_EQ(std::vector<std::uint64_t>(w.by_group().begin(), w.by_group().end()), (std::vector<std::uint64_t>{1, 2}));
  w.move(2, 0);  // submitted to provider 0
  w.move(1, 0);  // failed over
  w.move(3, 1);  // never opened: nothing
  EXPECT_EQ(std::vector<std::uint64_t>(w.by_group().begin(), w.by_group().end()), (std::vector<std::uint64_t>{3, 1}));
  w.open(1, 1);  // opened while open (a planted bug's replay): stays where it is
  EXPECT_EQ(w.group_of(1), 0u);
  w.close(1);
  w.close(1);  // closed twice: once
  w.close(4);  // never opened: nothing
  EXPECT_FALSE(w.is_open(1));
  EXPECT_TRUE(w.opened(1));
  EXPECT_EQ(w.group_of(1), 0u) << "a closed id keeps the group it was last in";
  EXPECT_FALSE(w.opened(3));
  EXPECT_EQ(std::vector<std::uint64_t>(w.by_group().begin(), w.by_group().end()), (std::vector<std::uint64_t>{2, 1}));
  w.reopen(1);  // a replay: back in the group it was last in
  EXPECT_TRUE(w.is_open(1));
  EXPECT_EQ(w.group_of(1), 0u);
  w.reopen(7);  // never opened: nothing
  EXPECT_FALSE(w.is_open(7));
  EXPECT_EQ(std::vector<std::uint64_t>(w.by_group().begin(), w.by_group().end()), (std::vector<std::uint64_t>{3, 1}));
  EXPECT_EQ(w.ids(), 6u);
}

TEST(Backlog, TheBusiestMinuteIsReadBesideTheAverage) {
  // 10 a second, except 40 a second from 600 s to 720 s; everything finished 5 s later.
  BacklogTrace t(std::chrono::hours(1));
  std::uint64_t opened = 0;
  for (int s = 1; s <= 3600; ++s) {
    opened += s > 600 && s <= 720 ? 40 : 10;
    t.take(50, 0, opened, opened - std::min<std::uint64_t>(opened, 50));
  }
  EXPECT_DOUBLE_EQ(t.peak_arrivals_per_s(), 40);
  EXPECT_DOUBLE_EQ(t.peak_throughput_per_s(), 40);
  BacklogTrace short_run(std::chrono::seconds(30));
  for (int s = 1; s <= 30; ++s) short_run.take(0, 0, 10u * s, 10u * s);
  EXPECT_EQ(short_run.peak_arrivals_per_s(), 0) << "no whole minute to read";
}

TEST(Backlog, TwoWindowsOfOneFaultAreNamedOnce) {
  const BacklogTrace t = trace(10, 80, 600, 1500);
  const auto drains = t.drains({fault(600, 700), fault(800, 900), fault(850, 950, "redis")});
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_EQ(drains[0].what, "outage serviceb, outage redis");
}

TEST(Backlog, ALongRunIsSampledMoreCoarsely) {
  EXPECT_EQ(BacklogTrace::step_for(std::chrono::hours(24)), seconds(1));
  EXPECT_EQ(BacklogTrace::step_for(std::chrono::hours(24 * 30)), seconds(25) + std::chrono::milliseconds(920));
}

TEST(Backlog, AfterTheWarmUpPeakAndMeanLeaveTheRampOut) {
  BacklogTrace t(std::chrono::hours(1));
  for (int s = 1; s <= 3600; ++s) {
    t.take(s <= 600 ? 100 : 10, 0);
    if (s == 600) t.measure_from_here();
  }
  EXPECT_EQ(t.peak(), 10u);
  EXPECT_DOUBLE_EQ(t.mean(), 10);
}

// MSER-5 on a made-up trace: a ramp over the first ten minutes, then a level with noise of its
// own. The cut lands at the ramp's end (to within a few batches); a trace with no ramp is not cut.
TEST(Backlog, SettleTimeIsWhereTheRampEnds) {
  BacklogTrace ramp(std::chrono::hours(1));
  BacklogTrace steady(std::chrono::hours(1));
  std::uint64_t noise = 12345;
  for (int s = 1; s <= 3600; ++s) {
    noise = noise * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto wobble = static_cast<std::uint64_t>(noise >> 60);  // 0..15
    steady.take(100 + wobble, 0);
    ramp.take(s < 600 ? static_cast<std::uint64_t>(s) / 6 + wobble : 100 + wobble, 0);
  }
  EXPECT_GE(ramp.settle_time(), seconds(540));
  EXPECT_LE(ramp.settle_time(), seconds(660));
  EXPECT_LE(steady.settle_time(), seconds(60)) << "a trace with no ramp has next to nothing to cut";
  BacklogTrace flat(std::chrono::hours(1));
  for (int s = 1; s <= 3600; ++s) flat.take(7, 0);
  EXPECT_EQ(flat.settle_time(), seconds(0));
}

// On real runs: the backlog the system counts from its events is the store's open work at the
// end, the run metrics are in the table `expect:` reads, and a fault's drain shows in the timeline.
class EverySystemsBacklog : public ::testing::TestWithParam<const char*> {};

TEST_P(EverySystemsBacklog, IsTheOpenWorkAndServesTheRunMetrics) {
  const Scenario s = load_scenario(testing::scenario_path(GetParam()));
  const RunResult r = run_scenario(s);
  ASSERT_TRUE(r.pass()) << testing::failures(r);
  EXPECT_EQ(r.run.work.open(), r.open_work());
  EXPECT_GT(r.run.work.finished, 0u);
  const auto metrics = r.system().metrics();
  const auto throughput = find_metric(metrics, "throughput_per_s");
  ASSERT_TRUE(throughput) << "the run metrics follow every system's own";
  EXPECT_DOUBLE_EQ(r.value(throughput->index), static_cast<double>(r.run.work.finished) / to_seconds(r.end));
  EXPECT_GE(r.value(find_metric(metrics, "peak_backlog")->index), r.value(find_metric(metrics, "mean_backlog")->index));
  ASSERT_FALSE(r.run.drains.empty()) << GetParam() << " has a fault to drain from";
  std::size_t drains = 0;
  for (const TimelineEvent& e : r.timeline) drains += e.kind == "drain" ? 1 : 0;
  EXPECT_EQ(drains, r.run.drains.size());
  // The latency comes back after each fault: in these runs the work finished before the fault
  // gives a level, and whole minutes after it finish work again at that level, by the run's end.
  for (const Drain& d : r.run.drains) {
    EXPECT_TRUE(d.latency_level.has_value()) << GetParam() << ": " << d.what;
    EXPECT_GE(d.latency_back, d.fault_end + std::chrono::minutes(1)) << GetParam() << ": " << d.what;
    EXPECT_TRUE(std::isfinite(d.latency_seconds())) << GetParam() << ": " << d.what;
  }
  EXPECT_EQ(r.value(find_metric(metrics, "latency_recovery_s")->index), r.run.latency_recovery_s());
}

// Little's law, L = λW, over a whole run that starts and ends empty: the time-average backlog is
// the arrival rate times the mean time from acknowledgement to the end (exactly, but for the
// backlog being sampled once a second). The webhook platform's latency and the outbox relay's
// run from acknowledgement to the end; the SMS gateway's ends at the provider's accept, before
// its receipt, so it is not the W of its backlog.
class LittlesLaw : public ::testing::TestWithParam<const char*> {};

TEST_P(LittlesLaw, HoldsOnAWholeRun) {
  const Scenario s = load_scenario(testing::scenario_path(GetParam()));
  const RunResult r = run_scenario(s);
  ASSERT_TRUE(r.pass()) << testing::failures(r);
  const auto metrics = r.system().metrics();
  const auto get = [&](const char* name) { return r.value(find_metric(metrics, name)->index); };
  ASSERT_EQ(get("unresolved"), 0) << "the run ends empty";
  ASSERT_EQ(get("failed"), 0) << "every message's time is in the latency";
  const double L = get("mean_backlog");
  const double lambda_W = get("arrivals_per_s") * get("latency_mean_s");
  EXPECT_NEAR(L, lambda_W, 0.02 * lambda_W) << GetParam();
}

// A warm-up changes what is measured, never what happens: the run has the same events and
// fingerprint, and what the run after the warm-up counted is what the whole run counted less what
// a run that stops where the warm-up ends counted (a run is the same as its prefix).
class EverySystemsWarmup : public ::testing::TestWithParam<std::pair<const char*, int>> {};

TEST_P(EverySystemsWarmup, MeasuresTheRestOfTheSameRun) {
  const auto [name, minutes] = GetParam();
  const Scenario whole = load_scenario(testing::scenario_path(name));
  Scenario warm = whole;
  warm.warmup = std::chrono::minutes(minutes);
  Scenario prefix = whole;
  prefix.duration = warm.warmup;
  const RunResult a = run_scenario(whole);
  const RunResult b = run_scenario(warm);
  const RunResult p = run_scenario(prefix);
  ASSERT_TRUE(a.pass()) << testing::failures(a);
  ASSERT_EQ(b.ledger.total(), 0u) << "the invariants hold over the whole run, warm-up or not";
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.events, b.events);
  ASSERT_EQ(p.end, prefix.duration + Time{}) << name << " is still busy when the warm-up ends";
  EXPECT_GT(p.run.work.opened, 0u);
  EXPECT_GT(b.run.work.opened, 0u);
  EXPECT_EQ(b.run.work.opened, a.run.work.opened - p.run.work.opened);
  EXPECT_EQ(b.run.work.finished, a.run.work.finished - p.run.work.finished);
  EXPECT_EQ(b.groups.all().finished, b.run.work.finished) << "the groups count after the warm-up too";
  EXPECT_DOUBLE_EQ(b.run.seconds, to_seconds(a.end) - minutes * 60.0);
  const auto metrics = b.system().metrics();
  const auto get = [&](const RunResult& r, const char* metric) { return r.value(find_metric(metrics, metric)->index); };
  EXPECT_DOUBLE_EQ(get(b, "arrivals_per_s"), static_cast<double>(b.run.work.opened) / b.run.seconds);
  EXPECT_EQ(get(b, "settle_time_s"), get(a, "settle_time_s")) << "the trace MSER-5 reads is the whole run's";
  EXPECT_LE(get(b, "peak_backlog"), get(a, "peak_backlog"));

  // Cut short a minute after the warm-up, a run reports the same unresolved work with or without
  // it: what was acknowledged before the warm-up's end is still open.
  const Time stop_at = Time{} + std::chrono::minutes(minutes + 1);
  const auto cut = [&](const Scenario& sc) {
    Time now{};
    RunOptions o;
    o.progress = [&now](Time t, std::uint64_t) { now = t; };
    o.should_stop = [&now, &stop_at] { return now > stop_at; };
    return run_scenario(sc, std::move(o));
  };
  const RunResult cold_cut = cut(whole);
  const RunResult warm_cut = cut(warm);
  ASSERT_EQ(warm_cut.ending, Ending::interrupted);
  EXPECT_EQ(warm_cut.end, cold_cut.end);
  EXPECT_EQ(get(warm_cut, "unresolved"), get(cold_cut, "unresolved"));
}

INSTANTIATE_TEST_SUITE_P(Backlog, EverySystemsWarmup,
                         ::testing::Values(std::pair{"quickstart", 10}, std::pair{"sms-provider-outage-failover", 5},
                                           std::pair{"outbox-shards", 2}),
                         [](const auto& param) {
                           std::string n = param.param.first;
                           for (char& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

INSTANTIATE_TEST_SUITE_P(Backlog, LittlesLaw, ::testing::Values("quickstart", "outbox-quickstart"));

INSTANTIATE_TEST_SUITE_P(Backlog, EverySystemsBacklog,
                         ::testing::Values("pod-crash-restart", "sms-provider-outage-failover", "outbox-broker-outage"));

}  // namespace
}  // namespace relaysim::sim
