// Reading webhook scenarios: every problem is located (file, line, column, key) and says what was
// expected; nothing is guessed or silently ignored. The cases of bad input a new user meets.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sim/loader.h"
#include "sim/report/groups.h"
#include "sim/writer.h"
#include "sim/webhook/spec.h"

namespace relaysim::sim::webhook {
namespace {

const char* kValid = R"(name: t
duration: 1h
system: webhook
webhook:
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
  ADD_FAILURE() << "expected a ScenarioError for:\n" << text;
  return ScenarioError("", 0, 0, "", "");
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

bool says(const ScenarioError& e, const std::string& text) { return std::string(e.what()).find(text) != std::string::npos; }

TEST(ScenarioLoader, ReadsAValidScenario) {
  const Scenario s = parse_scenario(kValid, "test.yaml");
  const WebhookSpec& w = spec_of(s);
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.duration, std::chrono::hours(1));
  EXPECT_EQ(w.platform.pods, 2u);
  EXPECT_EQ(w.endpoint_count(), 3u);
  EXPECT_EQ(w.endpoints[0].name, "group-0");
  ASSERT_EQ(w.load.size(), 1u);
  EXPECT_DOUBLE_EQ(w.load[0].arrivals.rate_per_s, 5.0);
  ASSERT_EQ(s.crashes.size(), 1u);
  EXPECT_EQ(s.crashes[0].pod, 1u);
  ASSERT_EQ(s.expect.size(), 2u);
  EXPECT_EQ(s.expect[1].name, "dlq_rate");
  EXPECT_DOUBLE_EQ(s.expect[1].value, 0.001);
}

TEST(ScenarioLoader, ALoadMayRampAndSwingOverADay) {
  const Scenario s = parse_scenario(
      replace(kValid, "{rate: 5/s, from: 0s, to: 30m}", "{rate: 5/s, from: 0s, to: 30m, ramp_to: 50/s, diurnal: {swing: 60%, peak_at: 15m, period: 1h}}"),
      "test.yaml");
  const ArrivalSpec& a = spec_of(s).load[0].arrivals;
  EXPECT_DOUBLE_EQ(a.ramp_to_per_s, 50.0);
  EXPECT_DOUBLE_EQ(a.swing, 0.6);
  EXPECT_EQ(a.peak_at, std::chrono::minutes(15));
  EXPECT_EQ(a.period, std::chrono::hours(1));
  // Written back as read.
  const std::string written = write_scenario(s);
  EXPECT_NE(written.find("ramp_to: 50/s"), std::string::npos) << written;
  EXPECT_NE(written.find("swing: 0.6"), std::string::npos) << written;
  EXPECT_EQ(spec_of(parse_scenario(written, "again.yaml")).load[0].arrivals, a);
  // What a shape cannot be.
  const auto refused = [](const std::string& segment, const std::string& why) {
    const ScenarioError e = error_for(replace(kValid, "{rate: 5/s, from: 0s, to: 30m}", segment));
    EXPECT_TRUE(says(e, why)) << e.what();
  };
  refused("{rate: 5/s, ramp_to: 9/s, arrival: bursty}", "`arrival: bursty` has its own spells");
  refused("{burst: 10, at: 1m, ramp_to: 9/s}", "`ramp_to` belongs to rates");
  refused("{rate: 5/s, diurnal: {period: 1h}}", "diurnal.swing: is required");
  refused("{rate: 5/s, diurnal: {swing: 120%}}", "swing");
  refused("{rate: 5/s, diurnal: {swing: 50%, period: 10ms}}", "period");
  refused("{rate: 5/s, diurnal: {swing: 50%, peek_at: 1h}}", "did you mean 'peak_at'");
}

TEST(ScenarioLoader, AMisspeltKeyNamesFileLineColumnAndSuggests) {
  const ScenarioError e = error_for(replace(kValid, "retry:", "retyr:"));
  EXPECT_EQ(e.file(), "test.yaml");
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(e.column(), 5);
  EXPECT_EQ(e.key(), "webhook.platform.retyr");
  EXPECT_TRUE(says(e, "did you mean 'retry'?")) << e.what();
  EXPECT_EQ(std::string(e.what()).rfind("test.yaml:7:5: webhook.platform.retyr: unknown key", 0), 0u) << e.what();
}

TEST(ScenarioLoader, ABadUnitSaysWhatWasExpected) {
  const ScenarioError e = error_for(replace(kValid, "initial: 1s", "initial: 1 sec"));
  EXPECT_EQ(e.key(), "webhook.platform.retry.initial");
  EXPECT_EQ(e.line(), 7);
  EXPECT_NE(e.problem().find("expected a duration"), std::string::npos);
}

TEST(ScenarioLoader, RetentionIsForeverOrADuration) {
  EXPECT_FALSE(spec_of(parse_scenario(kValid, "t.yaml")).platform.retention.has_value());
  EXPECT_FALSE(spec_of(parse_scenario(replace(kValid, "    pods: 2", "    pods: 2\n    retention: forever"), "t.yaml"))
                   .platform.retention);
  EXPECT_EQ(spec_of(parse_scenario(replace(kValid, "    pods: 2", "    pods: 2\n    retention: 10m"), "t.yaml")).platform.retention,
            std::chrono::minutes(10));
  const ScenarioError e = error_for(replace(kValid, "    pods: 2", "    pods: 2\n    retention: ten minutes"));
  EXPECT_EQ(e.key(), "webhook.platform.retention");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(says(e, "expected forever or a duration")) << e.what();
}

TEST(ScenarioLoader, AWrongTypeIsLocated) {
  const ScenarioError e = error_for(replace(kValid, "pods: 2", "pods: [2]"));
  EXPECT_EQ(e.key(), "webhook.platform.pods");
  EXPECT_EQ(e.line(), 6);
  EXPECT_TRUE(says(e, "whole number")) << e.what();
}

TEST(ScenarioLoader, AnUnknownMetricInExpectSuggestsTheRightOne) {
  const ScenarioError e = error_for(replace(kValid, "lost: 0", "lots: 0"));
  EXPECT_EQ(e.key(), "expect.lots");
  EXPECT_TRUE(says(e, "did you mean 'lost'?")) << e.what();
}

TEST(ScenarioLoader, AMalformedComparisonIsRefused) {
  const ScenarioError e = error_for(replace(kValid, "\"< 0.1%\"", "\"about 3\""));
  EXPECT_EQ(e.key(), "expect.dlq_rate");
}

TEST(ScenarioLoader, AComparisonThatCanNeverHoldIsRefused) {
  const ScenarioError ratio = error_for(replace(kValid, "lost: 0", "delivered_rate: \"> 99\""));
  EXPECT_EQ(ratio.key(), "expect.delivered_rate");
  EXPECT_TRUE(says(ratio, "did you mean '> 99%'?")) << ratio.what();
  EXPECT_TRUE(says(error_for(replace(kValid, "lost: 0", "lost: \"< 0\"")), "can never hold"));
  EXPECT_TRUE(says(error_for(replace(kValid, "lost: 0", "lost: \"< 5%\"")), "a count, not a percentage"));
  EXPECT_TRUE(says(error_for(replace(kValid, "lost: 0", "delivered_rate: \"> 100%\"")), "between 0% and 100%"));
  EXPECT_TRUE(says(error_for(replace(kValid, "lost: 0", "lost: 2.5")), "can never hold"));
}

TEST(ScenarioLoader, AnyLatencyPercentileMayBeExpected) {
  const Scenario s = parse_scenario(replace(kValid, "lost: 0", "latency_p99.9_s: \"< 2m\""), "t.yaml");
  ASSERT_EQ(s.expect.size(), 2u);
  EXPECT_EQ(s.expect[0].name, "latency_p99.9_s");
  EXPECT_DOUBLE_EQ(s.expect[0].parameter, 99.9);
  EXPECT_DOUBLE_EQ(s.expect[0].value, 120.0);
  EXPECT_TRUE(says(error_for(replace(kValid, "lost: 0", "latency_p101_s: 1")), "unknown metric"));
}

TEST(ScenarioLoader, ACrashOfAPodThatDoesNotExistIsRefused) {
  const ScenarioError e = error_for(replace(kValid, "crash: pod-1", "crash: pod-7"));
  EXPECT_EQ(e.key(), "faults[0].crash");
  EXPECT_TRUE(says(e, "pod-0 .. pod-1")) << e.what();
  EXPECT_TRUE(says(error_for(replace(kValid, "crash: pod-1", "crash: pod-01")), "expected a pod name"));
  EXPECT_TRUE(says(error_for(replace(kValid, "crash: pod-1", "crash: pod-+1")), "expected a pod name"));
}

TEST(ScenarioLoader, FaultsAreCrashesOrStoreFaults) {
  const Scenario s = parse_scenario(replace(kValid, "  - {at: 10m, crash: pod-1, restart_after: 1m}",
                                            "  - {at: 10m, crash: pod-1, restart_after: 1m, during_write: true}\n"
                                            "  - {at: 20m, store: full, for: 5m}"),
                                    "t.yaml");
  ASSERT_EQ(s.crashes.size(), 1u);
  EXPECT_TRUE(s.crashes[0].during_write);
  ASSERT_EQ(s.store_faults.size(), 1u);
  EXPECT_EQ(s.store_faults[0].failure, StoreFailure::full);
  EXPECT_EQ(s.store_faults[0].window.length, std::chrono::minutes(5));
  EXPECT_TRUE(says(error_for(replace(kValid, "crash: pod-1,", "crash: pod-1, store: busy,")), "a fault is one of a pod crash"));
  EXPECT_TRUE(says(error_for(replace(kValid, "crash: pod-1,", "crash: pod-1, for: 1m,")), "`for` belongs to store faults"));
  EXPECT_TRUE(says(error_for(replace(kValid, "crash: pod-1, restart_after: 1m", "store: slow")), "expected one of busy, full, io"));
}

TEST(ScenarioLoader, ALeaseNoLongerThanTheTimeoutsIsRefusedWithTheReason) {
  const ScenarioError e = error_for(replace(kValid, "pods: 2", "pods: 2\n    lease: 20s\n    http_timeout: 30s"));
  EXPECT_EQ(e.key(), "webhook.platform.lease");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(says(e, "duplicate delivery")) << e.what();
}

TEST(ScenarioLoader, MissingRequiredKeysAreNamed) {
  EXPECT_EQ(error_for("name: t\nsystem: webhook\nwebhook: {world: {endpoints: [{count: 1}]}}\n").key(), "duration");
  EXPECT_EQ(error_for("name: t\nduration: 1h\nwebhook: {world: {endpoints: [{count: 1}]}}\n").key(), "system");
  EXPECT_EQ(error_for("name: t\nduration: 1h\nsystem: webhook\n").key(), "webhook");
}

TEST(ScenarioLoader, TheOldLayoutSaysWhereItsKeysGoNow) {
  const ScenarioError e = error_for("name: t\nduration: 1h\nplatform: {pods: 2}\nworld: {endpoints: [{count: 1}]}\n");
  EXPECT_EQ(e.key(), "platform");
  EXPECT_TRUE(says(e, "system: webhook")) << e.what();
}

TEST(ScenarioLoader, AnUnknownSystemIsNamedWithTheSystemsThereAre) {
  const ScenarioError e = error_for(replace(kValid, "system: webhook", "system: webhok"));
  EXPECT_EQ(e.key(), "system");
  EXPECT_TRUE(says(e, "did you mean 'webhook'?")) << e.what();
}

TEST(ScenarioLoader, DuplicateKeysAreRefusedAtEveryLevel) {
  EXPECT_EQ(error_for(replace(kValid, "duration: 1h", "duration: 1h\nduration: 2h")).line(), 3);
  const ScenarioError c = error_for(replace(kValid, "    pods: 2", "    pods: 2\n    classification: {\"404\": retry, 404: terminal}"));
  EXPECT_EQ(c.key(), "webhook.platform.classification.404");
  EXPECT_TRUE(says(c, "appears twice")) << c.what();
}

TEST(ScenarioLoader, AKeyWithNoValueIsRefused) {
  const ScenarioError e = error_for(replace(kValid, "pods: 2", "pods:"));
  EXPECT_EQ(e.key(), "webhook.platform.pods");
  EXPECT_TRUE(says(e, "has no value")) << e.what();
}

TEST(ScenarioLoader, NumbersMustBeNumbers) {
  for (const char* bad : {"nan", "NAN", "inf", "0x10", "1e400"}) {
    const ScenarioError e = error_for(replace(kValid, "initial: 1s", std::string("initial: 1s, multiplier: ") + bad));
    EXPECT_EQ(e.key(), "webhook.platform.retry.multiplier") << bad;
  }
  for (const char* bad : {"\" 2\"", "+2", "2.0", "-1", "1e3"}) {
    EXPECT_EQ(error_for(replace(kValid, "pods: 2", std::string("pods: ") + bad)).key(), "webhook.platform.pods") << bad;
  }
  EXPECT_TRUE(says(error_for(replace(kValid, "name: t", "name: t\nseed: 18446744073709551616")), "must be between 0 and"));
}

TEST(ScenarioLoader, SumsAndLimitsThatWouldOverflowAreLocatedErrors) {
  // Durations: at most ten years each, so the simulator's sums of a few of them never overflow.
  EXPECT_TRUE(says(error_for(replace(kValid, "duration: 1h", "duration: 1000000d")), "at most 3650d"));
  EXPECT_EQ(error_for(replace(kValid, "pods: 2", "pods: 2\n    lookup_timeout: 60000d")).key(),
            "webhook.platform.lookup_timeout");
  EXPECT_EQ(error_for(replace(kValid, "deadline: 24h", "deadline: 100000d")).key(), "webhook.platform.retry.deadline");
  // Rates: a gap longer than any run, or shorter than the clock's nanosecond.
  for (const char* bad : {"1e-300/s", "0.000001/d", "1e300/s", "2e9/s"}) {
    EXPECT_EQ(error_for(replace(kValid, "rate: 5/s", std::string("rate: ") + bad)).key(), "webhook.load[0].rate") << bad;
  }
  // Endpoints: the groups' sum.
  std::string many = kValid;
  for (int i = 0; i < 3; ++i) many = replace(many, "      - {count: 3}", "      - {count: 3}\n      - {count: 5000000}");
  const ScenarioError e = error_for(many);
  EXPECT_EQ(e.key(), "webhook.world.endpoints[2].count");
  EXPECT_TRUE(says(e, "more than the 10000000")) << e.what();
  // And the groups' number: a request keeps its group in 15 bits (OpenWork).
  std::string groups;
  for (std::size_t i = 0; i <= kMaxGroups; ++i) groups += "      - {count: 1}\n";
  const ScenarioError g = error_for(replace(kValid, "      - {count: 3}\n", groups));
  EXPECT_EQ(g.key(), "webhook.world.endpoints[" + std::to_string(kMaxGroups) + "]") << g.what();
  EXPECT_TRUE(says(g, "one endpoint group more than the 32765")) << g.what();
}

TEST(ScenarioLoader, WhatStartsAfterTheRunEndsIsRefused) {
  EXPECT_EQ(error_for(replace(kValid, "{rate: 5/s, from: 0s, to: 30m}", "{rate: 5/s, from: 2h, to: 3h}")).key(), "webhook.load[0].from");
  EXPECT_EQ(error_for(replace(kValid, "at: 10m, crash", "at: 1h, crash")).key(), "faults[0].at");
  EXPECT_TRUE(says(error_for(replace(kValid, "      - {count: 3}", "      - {count: 3, down: [{at: 2h}]}")), "would never happen"));
}

TEST(ScenarioLoader, ASecondDocumentIsRefused) {
  const ScenarioError e = error_for(std::string(kValid) + "---\nname: other\n");
  EXPECT_TRUE(says(e, "a second YAML document")) << e.what();
  EXPECT_EQ(e.line(), 18);
  EXPECT_NO_THROW(parse_scenario(std::string("---\n") + kValid + "...\n", "markers.yaml"));
}

TEST(ScenarioLoader, TextThatIsNotUtf8IsRefusedWhereItIs) {
  const ScenarioError e = error_for(replace(kValid, "name: t", "name: caf\xe9"));
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.column(), 10);
  EXPECT_TRUE(says(e, "not valid UTF-8")) << e.what();
}

TEST(ScenarioLoader, BrokenYamlIsLocated) {
  const ScenarioError e = error_for("name: t\nduration: [1h\n");
  EXPECT_GT(e.line(), 0);
  EXPECT_NE(e.problem().find("not valid YAML"), std::string::npos);
}

TEST(ScenarioLoader, AnUnterminatedQuoteIsNamedAsSuch) {
  // At the end of the file, yaml-cpp reads it to the end; elsewhere it fails further on.
  const ScenarioError end = error_for("name: t\nduration: 1h\nsystem: webhook\nwebhook: {world: {endpoints: [{count: 1}]}}\n"
                                      "description: \"runs on\n");
  EXPECT_EQ(end.line(), 5);
  EXPECT_TRUE(says(end, "never closed")) << end.what();
  const ScenarioError mid = error_for(replace(kValid, "name: t", "name: \"t"));
  EXPECT_EQ(mid.line(), 1);
  EXPECT_EQ(mid.column(), 7);
  EXPECT_TRUE(says(mid, "closing \" missing")) << mid.what();
}

TEST(ScenarioLoader, DeepNestingIsNamedAsSuch) {
  const ScenarioError e = error_for("name: " + std::string(5000, '[') + std::string(5000, ']') + "\n");
  EXPECT_TRUE(says(e, "nests values more than 64 deep")) << e.what();
}

TEST(ScenarioLoader, AnEmptyFileSaysSo) {
  EXPECT_TRUE(says(error_for("# only a comment\n"), "holds no scenario"));
  EXPECT_TRUE(says(error_for(""), "holds no scenario"));
}

TEST(ScenarioLoader, AMissingFileADirectoryAndADeviceAreClearErrors) {
  auto message = [](const std::string& path) {
    try {
      load_scenario(path);
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("/no/such/scenario.yaml").find("cannot open"), std::string::npos);
  EXPECT_NE(message(RELAYSIM_SOURCE_DIR).find("is a directory"), std::string::npos);
  EXPECT_NE(message("/dev/zero").find("is a character device"), std::string::npos);
}

// Inputs the fuzz targets found: each must be refused, quickly (the test has a time limit).
TEST(ScenarioLoader, EveryFuzzFindingIsRefused) {
  const std::string dir = std::string(RELAYSIM_SOURCE_DIR) + "/tests/fuzz/regressions";
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++n;
    EXPECT_THROW(load_scenario(e.path().string()), ScenarioError) << e.path();
  }
  EXPECT_GE(n, 4u);
}

TEST(ScenarioLoader, TheWriterLeavesDefaultsOutAndQuotesText) {
  Scenario s = parse_scenario(kValid, "t.yaml");
  s.name = "yes: \"quoted\"";
  const std::string text = write_scenario(s);
  EXPECT_EQ(text.find("concurrency_per_pod"), std::string::npos) << text;
  const Scenario again = parse_scenario(text, "again.yaml");
  EXPECT_EQ(again.name, s.name);
  EXPECT_TRUE(spec_of(again) == spec_of(s));
}

}  // namespace
}  // namespace relaysim::sim::webhook
