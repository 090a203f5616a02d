// Every shipped outbox scenario passes on both stores with the same run; a pause fault is read
// and written back; the relay's invariants catch what they claim to.
#include <gtest/gtest.h>

#include <string>

#include "sim/outbox/metrics.h"
#include "sim/outbox/spec.h"
#include "sim/run.h"
#include "sim/loader.h"
#include "tests/scenario_helpers.h"

namespace relaysim::sim::outbox {
namespace {

const std::string kShipped[] = {"outbox-quickstart",
                                "outbox-broker-outage",
                                "outbox-leader-pause-split-brain",
                                "outbox-lost-acks",
                                "outbox-consumer-crash-mid-handle",
                                "outbox-stuck-processing-rescue",
                                "outbox-consumer-rebalance",
                                "outbox-shards"};

using testing::failures;
using testing::scenario_path;

class ShippedOutboxScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedOutboxScenario, PassesOnBothStoresWithTheSameRun) {
  const Scenario s = load_scenario(scenario_path(GetParam()));
  const RunResult memory = run_scenario(s);
  EXPECT_TRUE(memory.pass()) << failures(memory);
  EXPECT_GT(memory.value(metric("handled")), 0);
  EXPECT_EQ(memory.value(metric("effects")), memory.value(metric("handled")));
  RunOptions o;
  o.store = StoreKind::sqlite;
  const RunResult sqlite = run_scenario(s, std::move(o));
  EXPECT_TRUE(sqlite.pass()) << failures(sqlite);
  // The two stores keep one contract: the whole run, event for event, is the same.
  EXPECT_EQ(memory.fingerprint, sqlite.fingerprint);
}

INSTANTIATE_TEST_SUITE_P(All, ShippedOutboxScenario, ::testing::ValuesIn(kShipped), [](const auto& p) {
  std::string n = p.param;
  for (char& c : n) c = c == '-' ? '_' : c;
  return n;
});

TEST(OutboxRun, TheSameSeedGivesTheSameRun) {
  const Scenario s = load_scenario(scenario_path("outbox-quickstart"));
  EXPECT_EQ(run_scenario(s).fingerprint, run_scenario(s).fingerprint);
}

// A leader paused past its lease resumes believing it leads; the fence keeps its writes out, and
// every invariant holds.
TEST(OutboxRun, APausedLeaderIsFencedOut) {
  Scenario s = load_scenario(scenario_path("outbox-quickstart"));
  s.pauses.push_back(PauseFault{Time{} + std::chrono::minutes(2), 0, std::chrono::seconds(30)});
  s.pauses.push_back(PauseFault{Time{} + std::chrono::minutes(4), 1, std::chrono::seconds(30)});
  const RunResult r = run_scenario(s);
  EXPECT_TRUE(r.pass()) << failures(r);
  EXPECT_GE(r.value(metric("pauses")), 2);
  EXPECT_GE(r.value(metric("leader_terms")), 4);  // each paused leader's shard moved
  EXPECT_GT(r.value(metric("split_brain_s")), 0);
}

}  // namespace
}  // namespace relaysim::sim::outbox
