#include <gtest/gtest.h>

#include <string>

#include "sim/scenario/loader.h"

namespace relaysim::sim {
namespace {

const char* kValid = R"(name: t
duration: 1h
platform:
  pods: 2
  retry: {initial: 1s, deadline: 24h}
world:
  endpoints:
    - {count: 3}
load:
  - {rate: 5/s, from: 0s, to: 30m}
faults:
  - {at: 10m, crash: pod-1, restart_after: 1m}
expect:
  lost: 0
  dlq_rate: "< 0.1%"
)";

ScenarioError error_for(const std::string& text) {
  try {
    parse_scenario(text, "test.yaml");
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ScenarioError";
  return ScenarioError("", 0, 0, "", "");
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(ScenarioLoader, ReadsAValidScenario) {
  const Scenario s = parse_scenario(kValid, "test.yaml");
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.duration, std::chrono::hours(1));
  EXPECT_EQ(s.platform.pods, 2u);
  EXPECT_EQ(s.endpoint_count(), 3u);
  ASSERT_EQ(s.load.size(), 1u);
  EXPECT_DOUBLE_EQ(s.load[0].rate_per_s, 5.0);
  ASSERT_EQ(s.crashes.size(), 1u);
  EXPECT_EQ(s.crashes[0].pod, 1u);
  ASSERT_EQ(s.expect.size(), 2u);
  EXPECT_EQ(s.expect[1].metric, "dlq_rate");
  EXPECT_DOUBLE_EQ(s.expect[1].value, 0.001);
}

TEST(ScenarioLoader, AMisspeltKeyNamesFileLineColumnAndSuggests) {
  const ScenarioError e = error_for(replace(kValid, "retry:", "retyr:"));
  EXPECT_EQ(e.file(), "test.yaml");
  EXPECT_EQ(e.line(), 5);
  EXPECT_EQ(e.column(), 3);
  EXPECT_EQ(e.key(), "platform.retyr");
  EXPECT_NE(std::string(e.what()).find("did you mean 'retry'?"), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).rfind("test.yaml:5:3: platform.retyr: unknown key", 0), 0u) << e.what();
}

TEST(ScenarioLoader, ABadUnitSaysWhatWasExpected) {
  const ScenarioError e = error_for(replace(kValid, "initial: 1s", "initial: 1 sec"));
  EXPECT_EQ(e.key(), "platform.retry.initial");
  EXPECT_EQ(e.line(), 5);
  EXPECT_NE(e.problem().find("expected a duration"), std::string::npos);
}

TEST(ScenarioLoader, RetentionIsForeverOrADuration) {
  EXPECT_FALSE(parse_scenario(kValid, "test.yaml").platform.retention.has_value());
  EXPECT_FALSE(parse_scenario(replace(kValid, "  pods: 2", "  pods: 2\n  retention: forever"), "t.yaml").platform.retention);
  EXPECT_EQ(parse_scenario(replace(kValid, "  pods: 2", "  pods: 2\n  retention: 10m"), "t.yaml").platform.retention,
            std::chrono::minutes(10));
  const ScenarioError e = error_for(replace(kValid, "  pods: 2", "  pods: 2\n  retention: ten minutes"));
  EXPECT_EQ(e.key(), "platform.retention");
  EXPECT_EQ(e.line(), 5);
  EXPECT_NE(e.problem().find("expected forever or a duration"), std::string::npos) << e.what();
}

TEST(ScenarioLoader, AWrongTypeIsLocated) {
  const ScenarioError e = error_for(replace(kValid, "pods: 2", "pods: [2]"));
  EXPECT_EQ(e.key(), "platform.pods");
  EXPECT_EQ(e.line(), 4);
  EXPECT_NE(e.problem().find("whole number"), std::string::npos);
}

TEST(ScenarioLoader, AnUnknownMetricInExpectSuggestsTheRightOne) {
  const ScenarioError e = error_for(replace(kValid, "lost: 0", "lots: 0"));
  EXPECT_EQ(e.key(), "expect.lots");
  EXPECT_NE(e.problem().find("did you mean 'lost'?"), std::string::npos) << e.what();
}

TEST(ScenarioLoader, AMalformedComparisonIsRefused) {
  const ScenarioError e = error_for(replace(kValid, "\"< 0.1%\"", "\"about 3\""));
  EXPECT_EQ(e.key(), "expect.dlq_rate");
}

TEST(ScenarioLoader, ACrashOfAPodThatDoesNotExistIsRefused) {
  const ScenarioError e = error_for(replace(kValid, "crash: pod-1", "crash: pod-7"));
  EXPECT_EQ(e.key(), "faults[0].crash");
  EXPECT_NE(e.problem().find("pod-0 .. pod-1"), std::string::npos) << e.what();
}

TEST(ScenarioLoader, ALeaseNoLongerThanTheTimeoutsIsRefusedWithTheReason) {
  const ScenarioError e = error_for(replace(kValid, "pods: 2", "pods: 2\n  lease: 20s\n  http_timeout: 30s"));
  EXPECT_EQ(e.key(), "platform.lease");
  EXPECT_EQ(e.line(), 5);
  EXPECT_NE(e.problem().find("duplicate delivery"), std::string::npos) << e.what();
}

TEST(ScenarioLoader, MissingRequiredKeysAreNamed) {
  const ScenarioError e = error_for("name: t\nworld: {endpoints: [{count: 1}]}\n");
  EXPECT_EQ(e.key(), "duration");
}

TEST(ScenarioLoader, DuplicateKeysAreRefused) {
  const ScenarioError e = error_for(replace(kValid, "duration: 1h", "duration: 1h\nduration: 2h"));
  EXPECT_EQ(e.key(), "duration");
  EXPECT_EQ(e.line(), 3);
}

TEST(ScenarioLoader, BrokenYamlIsLocated) {
  const ScenarioError e = error_for("name: t\nduration: [1h\n");
  EXPECT_GT(e.line(), 0);
  EXPECT_NE(e.problem().find("not valid YAML"), std::string::npos);
}

TEST(ScenarioLoader, AMissingFileIsAClearError) {
  try {
    load_scenario("/no/such/scenario.yaml");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
  }
}

}  // namespace
}  // namespace relaysim::sim
