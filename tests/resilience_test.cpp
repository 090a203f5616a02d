// The small shared resilience pieces: the bucketed window (model/resilience/window_counter.h) and
// the peak EWMA (model/resilience/ewma.h).
#include <gtest/gtest.h>

#include "model/resilience/ewma.h"
#include "model/resilience/window_counter.h"

namespace relaysim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
const Time t0 = Time{} + seconds(100);

TEST(WindowCounter, CountsWhatWasAddedInTheWindowAndDropsOldBucketsWhole) {
  WindowCounter w(seconds(10));
  w.add(t0, false);
  w.add(t0 + seconds(1), true);
  w.add(t0 + seconds(9), true);
  EXPECT_EQ(w.totals(t0 + seconds(9)).calls, 3U);
  EXPECT_EQ(w.totals(t0 + seconds(9)).failures, 2U);
  EXPECT_DOUBLE_EQ(w.totals(t0 + seconds(9)).failure_rate(), 2.0 / 3.0);
  EXPECT_EQ(w.totals(t0 + seconds(10)).calls, 2U);  // the first second's bucket has left
  EXPECT_EQ(w.totals(t0 + seconds(18)).calls, 1U);
  EXPECT_EQ(w.totals(t0 + seconds(19)).calls, 0U);  // ten seconds after the last sample
  EXPECT_DOUBLE_EQ(w.totals(t0 + seconds(19)).failure_rate(), 0.0);
}

TEST(WindowCounter, ClearForgetsEverything) {
  WindowCounter w(seconds(10));
  w.add(t0, true);
  w.clear();
  EXPECT_EQ(w.totals(t0).calls, 0U);
}

TEST(PeakEwma, StartsAtTheDefaultAndJumpsToASlowerSample) {
  PeakEwma e(EwmaConfig{seconds(10), milliseconds(100), seconds(5)});
  EXPECT_FALSE(e.seen());
  EXPECT_DOUBLE_EQ(e.estimate_ns(), 1e8);
  e.observe(t0, milliseconds(20));  // the first sample replaces the default
  EXPECT_DOUBLE_EQ(e.estimate_ns(), 2e7);
  e.observe(t0, milliseconds(300));  // a peak is taken at once
  EXPECT_DOUBLE_EQ(e.estimate_ns(), 3e8);
}

TEST(PeakEwma, AFasterSampleIsBlendedByTheTimeSinceTheLast) {
  PeakEwma e(EwmaConfig{seconds(10), milliseconds(100), seconds(5)});
  e.observe(t0, milliseconds(300));
  e.observe(t0, milliseconds(100));  // no time passed: nothing learned
  EXPECT_DOUBLE_EQ(e.estimate_ns(), 3e8);
  e.observe(t0 + seconds(10), milliseconds(100));  // one decay: keeps 1/e of the old estimate
  EXPECT_NEAR(e.estimate_ns(), 3e8 * std::exp(-1.0) + 1e8 * (1 - std::exp(-1.0)), 1.0);
}

// Linkerd: without a penalty a provider that fails fast looks fastest.
TEST(PeakEwma, AFailureCostsThePenalty) {
  PeakEwma e(EwmaConfig{seconds(10), milliseconds(100), seconds(5)});
  e.observe(t0, milliseconds(50));
  e.observe_failure(t0 + milliseconds(1));
  EXPECT_DOUBLE_EQ(e.estimate_ns(), 5e9);
}

}  // namespace
}  // namespace relaysim
