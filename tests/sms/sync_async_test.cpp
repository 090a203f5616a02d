// The sync-to-async switch (model/sms/sync_async.h): each rule at its boundary (one short of it
// does not fire), the timer exit exactly on time, the probe exit, and nothing routed nowhere.
#include <gtest/gtest.h>

#include "model/sms/sync_async.h"

namespace relaysim::sms {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Time start = Time{} + seconds(100);

SyncAsyncConfig base() {
  SyncAsyncConfig c;
  c.enabled = true;
  c.latency.over = milliseconds(500);
  c.latency.consecutive = 5;
  return c;
}

TEST(SyncAsync, ConsecutiveSlowSubmitsEnterAtTheNthNotBefore) {
  SyncAsyncController s(base());
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(s.observe(start, milliseconds(600), false, SendPath::sync));
  EXPECT_FALSE(s.observe(start, milliseconds(100), false, SendPath::sync)) << "a fast one breaks the run";
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(s.observe(start, milliseconds(600), false, SendPath::sync));
  const ModeChange c = s.observe(start, milliseconds(600), false, SendPath::sync);
  EXPECT_TRUE(c.entered);
  EXPECT_EQ(c.rule, AsyncRule::latency_consecutive);
  EXPECT_TRUE(s.async());
  EXPECT_FALSE(s.observe(start, milliseconds(500), false, SendPath::sync)) << "exactly the threshold is not slower";
}

TEST(SyncAsync, TheWindowMeanNeedsItsMinimumVolume) {
  SyncAsyncConfig c = base();
  c.latency.consecutive = 0;
  c.latency.window = seconds(10);
  c.latency.min_calls = 4;
  SyncAsyncController s(c);
  // Means above 500 ms, but only three calls.
  EXPECT_FALSE(s.observe(start, milliseconds(900), false, SendPath::sync));
  EXPECT_FALSE(s.observe(start, milliseconds(100), false, SendPath::sync));
  EXPECT_FALSE(s.observe(start, milliseconds(900), false, SendPath::sync));
  EXPECT_EQ(s.observe(start, milliseconds(300), false, SendPath::sync).rule, AsyncRule::latency_window);
}

TEST(SyncAsync, GrowthSecondOverSecond) {
  SyncAsyncConfig c = base();
  c.latency.over = Duration::zero();
  c.growth.percent = 50;
  c.growth.min_calls = 2;
  SyncAsyncController s(c);
  for (int i = 0; i < 2; ++i) s.observe(start, milliseconds(100), false, SendPath::sync);
  for (int i = 0; i < 2; ++i) s.observe(start + seconds(1), milliseconds(150), false, SendPath::sync);
  EXPECT_FALSE(s.observe(start + seconds(2), milliseconds(1), false, SendPath::sync)) << "exactly +50 % does not fire";
  s.observe(start + seconds(2), milliseconds(299), false, SendPath::sync);  // second 2: mean 150 ms
  const ModeChange c3 = s.observe(start + seconds(3), milliseconds(1), false, SendPath::sync);
  EXPECT_FALSE(c3) << "150 after 150: no growth";
  SyncAsyncController g(c);
  for (int i = 0; i < 2; ++i) g.observe(start, milliseconds(100), false, SendPath::sync);
  for (int i = 0; i < 2; ++i) g.observe(start + seconds(1), milliseconds(151), false, SendPath::sync);
  EXPECT_EQ(g.observe(start + seconds(2), milliseconds(1), false, SendPath::sync).rule, AsyncRule::growth);
}

TEST(SyncAsync, ErrorRateOverItsWindow) {
  SyncAsyncConfig c = base();
  c.latency.over = Duration::zero();
  c.error_rate.over = 0.5;
  c.error_rate.min_calls = 4;
  SyncAsyncController s(c);
  EXPECT_FALSE(s.observe(start, milliseconds(1), true, SendPath::sync));
  EXPECT_FALSE(s.observe(start, milliseconds(1), true, SendPath::sync));
  EXPECT_FALSE(s.observe(start, milliseconds(1), false, SendPath::sync));
  EXPECT_FALSE(s.observe(start, milliseconds(1), false, SendPath::sync)) << "2 of 4 is not more than half";
  EXPECT_EQ(s.observe(start, milliseconds(1), true, SendPath::sync).rule, AsyncRule::error_rate);
}

TEST(SyncAsync, TheTimerExitIsExactlyAfterTheConfiguredTime) {
  SyncAsyncConfig c = base();
  c.after = seconds(60);
  SyncAsyncController s(c);
  for (int i = 0; i < 5; ++i) s.observe(start, seconds(1), false, SendPath::sync);
  ASSERT_TRUE(s.async());
  ModeChange change;
  EXPECT_EQ(s.route(start + seconds(60) - Duration(1), change), SendPath::async);
  EXPECT_FALSE(change);
  EXPECT_EQ(s.route(start + seconds(60), change), SendPath::sync);
  EXPECT_TRUE(change.left);
  EXPECT_EQ(change.rule, AsyncRule::timer);
  EXPECT_FALSE(s.async());
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(s.observe(start + seconds(61), seconds(1), false, SendPath::sync))
      << "judged afresh after leaving";
}

TEST(SyncAsync, ProbesKeepAboutOneInKSyncAndGoodOnesEndTheMode) {
  SyncAsyncConfig c = base();
  c.exit = SyncAsyncConfig::Exit::probe;
  c.probe_every = 100;
  c.min_probes = 3;
  SyncAsyncController s(c);
  for (int i = 0; i < 5; ++i) s.observe(start, seconds(1), false, SendPath::sync);
  ASSERT_TRUE(s.async());
  ModeChange change;
  int probes = 0;
  for (int i = 0; i < 1000; ++i) {
    const SendPath p = s.route(start + seconds(1), change);
    EXPECT_NE(p, SendPath::sync) << "in async mode a send is async or a probe";
    probes += p == SendPath::probe;
  }
  EXPECT_EQ(probes, 10);
  EXPECT_FALSE(s.observe(start, milliseconds(100), false, SendPath::probe));
  EXPECT_FALSE(s.observe(start, milliseconds(900), false, SendPath::probe)) << "a slow probe starts the count again";
  EXPECT_FALSE(s.observe(start, milliseconds(100), false, SendPath::probe));
  EXPECT_FALSE(s.observe(start, milliseconds(100), false, SendPath::probe));
  const ModeChange left = s.observe(start, milliseconds(100), false, SendPath::probe);
  EXPECT_TRUE(left.left);
  EXPECT_EQ(left.rule, AsyncRule::probes);
  EXPECT_FALSE(s.async());
}

TEST(SyncAsync, DisabledNeverLeavesSync) {
  SyncAsyncConfig c = base();
  c.enabled = false;
  SyncAsyncController s(c);
  for (int i = 0; i < 50; ++i) EXPECT_FALSE(s.observe(start, seconds(5), true, SendPath::sync));
  ModeChange change;
  EXPECT_EQ(s.route(start, change), SendPath::sync);
}

}  // namespace
}  // namespace relaysim::sms
