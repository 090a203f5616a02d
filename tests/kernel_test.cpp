#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "model/core/fingerprint.h"
#include "model/core/random.h"
#include "sim/kernel/kernel.h"

namespace relaysim::sim {
namespace {

using std::chrono::seconds;

TEST(Kernel, RunsEventsInTimeOrderAndTiesInSchedulingOrder) {
  Kernel k;
  std::vector<int> order;
  k.at(Time{} + seconds(2), [&] { order.push_back(3); });
  k.at(Time{} + seconds(1), [&] { order.push_back(1); });
  k.at(Time{} + seconds(1), [&] { order.push_back(2); });
  k.at(Time{} + seconds(3), [&] { order.push_back(4); });
  EXPECT_FALSE(k.run_until(kTimeNever));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(k.now(), Time{} + seconds(3));
  EXPECT_EQ(k.events_run(), 4u);
}

TEST(Kernel, CancelledEventsNeverRun) {
  Kernel k;
  int ran = 0;
  const EventId a = k.at(Time{} + seconds(1), [&] { ran += 1; });
  k.at(Time{} + seconds(2), [&] { ran += 10; });
  EXPECT_TRUE(k.cancel(a));
  EXPECT_FALSE(k.cancel(a));  // twice is a no-op
  EXPECT_EQ(k.pending(), 1u);
  k.run_until(kTimeNever);
  EXPECT_EQ(ran, 10);
}

TEST(Kernel, CancellingAFiredEventDoesNotTouchItsReusedSlot) {
  Kernel k;
  int ran = 0;
  const EventId first = k.at(Time{} + seconds(1), [&] { ++ran; });
  k.run_until(Time{} + seconds(1));
  k.at(Time{} + seconds(2), [&] { ran += 100; });  // reuses the freed slot
  EXPECT_FALSE(k.cancel(first));
  k.run_until(kTimeNever);
  EXPECT_EQ(ran, 101);
}

TEST(Kernel, EventsMayScheduleMoreEvents) {
  Kernel k;
  int count = 0;
  std::function<void()> tick = [&] {
    if (++count < 100) k.after(seconds(1), [&] { tick(); });
  };
  k.at(Time{}, [&] { tick(); });
  k.run_until(kTimeNever);
  EXPECT_EQ(count, 100);
  EXPECT_EQ(k.now(), Time{} + seconds(99));
}

TEST(Kernel, RunUntilStopsAtTheLimitAndAdvancesTheClock) {
  Kernel k;
  int ran = 0;
  k.at(Time{} + seconds(5), [&] { ++ran; });
  k.at(Time{} + seconds(15), [&] { ++ran; });
  EXPECT_TRUE(k.run_until(Time{} + seconds(10)));
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(k.now(), Time{} + seconds(10));
  EXPECT_FALSE(k.run_until(Time{} + seconds(20)));
  EXPECT_EQ(ran, 2);
}

// Every event ever scheduled at or after the clock, in one global (time, scheduling) order: that
// is the order a kernel must run them in, whatever its queue does inside. Checked on a queue large
// enough to use its buckets, with events scheduled from inside events, a driver that stops at
// limits and then schedules before the next event, and cancellations.
TEST(Kernel, ALargeQueueRunsEveryEventInTimeThenSchedulingOrder) {
  struct World {
    Kernel k;
    Rng rng{11};
    std::uint64_t scheduled = 0;
    std::set<std::pair<std::int64_t, std::uint64_t>> expected;  // (time, scheduling number)
    std::vector<std::pair<std::int64_t, std::uint64_t>> ran;
    std::vector<std::pair<EventId, std::pair<std::int64_t, std::uint64_t>>> ids;

    void schedule(Time at) {
      const std::uint64_t me = scheduled++;
      const EventId id = k.at(at, [this, me] {
        ran.emplace_back(to_ns(k.now()), me);
        if (me % 3 == 0 && scheduled < 200'000) {
          schedule(k.now());
          schedule(k.now() + Duration{static_cast<std::int64_t>(rng.below(5'000'000))});
        }
      });
      expected.emplace(to_ns(at), me);
      ids.emplace_back(id, std::make_pair(to_ns(at), me));
    }
  } w;
  for (int i = 0; i < 30'000; ++i) w.schedule(Time{} + Duration{static_cast<std::int64_t>(w.rng.below(1'000'000'000))});
  for (std::size_t i = 0; i < w.ids.size(); i += 7) {
    ASSERT_TRUE(w.k.cancel(w.ids[i].first));
    w.expected.erase(w.ids[i].second);
  }
  for (Time limit = Time{}; w.k.pending() > 0; limit += std::chrono::milliseconds(10)) {
    w.k.run_until(limit);
    // At the limit, before the next event: as a driver adds an arrival.
    if (w.scheduled < 200'000) w.schedule(w.k.now() + Duration{static_cast<std::int64_t>(w.rng.below(1'000))});
  }
  EXPECT_GT(w.ran.size(), 50'000u);
  const std::vector<std::pair<std::int64_t, std::uint64_t>> in_order(w.expected.begin(), w.expected.end());
  EXPECT_EQ(w.ran, in_order);
}

TEST(KernelDeathTest, SchedulingInThePastIsABug) {
  Kernel k;
  k.at(Time{} + seconds(5), [] {});
  k.run_until(kTimeNever);
  EXPECT_DEATH(k.at(Time{} + seconds(1), [] {}), "scheduled in the past");
}

TEST(Fingerprint, DependsOnEveryValueAndItsOrder) {
  Fingerprint a, b, c;
  a.mix(1);
  a.mix(2);
  b.mix(1);
  b.mix(2);
  c.mix(2);
  c.mix(1);
  EXPECT_EQ(a.value(), b.value());
  EXPECT_NE(a.value(), c.value());
}

}  // namespace
}  // namespace relaysim::sim
