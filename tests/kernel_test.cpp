#include <gtest/gtest.h>

#include <vector>

#include "model/core/fingerprint.h"
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
