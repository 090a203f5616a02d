// Every shipped scenario passes; runs are deterministic; the two stores agree.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/run.h"
#include "sim/system.h"
#include "sim/loader.h"
#include "sim/writer.h"
#include "sim/outbox/spec.h"
#include "sim/sms/spec.h"
#include "sim/webhook/metrics.h"
#include "sim/webhook/spec.h"
#include "tests/scenario_helpers.h"

namespace relaysim::sim::webhook {
namespace {

using testing::failures;
using testing::scenario_path;

class ShippedScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedScenario, PassesOnTheMemoryStore) {
  const Scenario s = load_scenario(scenario_path(GetParam()));
  const RunResult r = run_scenario(s);
  EXPECT_TRUE(r.pass()) << failures(r);
  EXPECT_GT(r.value(metric("ingested")), 0);
}

INSTANTIATE_TEST_SUITE_P(All, ShippedScenario,
                         ::testing::Values("quickstart", "serviceb-outage", "endpoint-429-storm", "flaky-endpoints-24h",
                                           "pod-crash-restart", "serviceb-url-change", "store-faults",
                                           "operator-replays", "twin-outage"),
                         [](const auto& p) {
                           std::string n = p.param;
                           for (char& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

TEST(ShippedScenarios, EveryWebhookFileInScenariosIsTested) {
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(RELAYSIM_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() == ".yaml" && load_scenario(entry.path().string()).system->name() == "webhook") ++n;
  }
  EXPECT_EQ(n, 12u) << "a new scenario file needs a line in ShippedScenario's list (or LongScenario's)";
}

// The capacity scenario runs 1.5 million requests for `relaysim plan`; here its first minute, whose
// p99 (the endpoints' own, at this scale) already meets the target.
TEST(LongScenario, TheCapacityPlanningScenarioPassesCutToAMinute) {
  Scenario s = load_scenario(scenario_path("capacity-5000"));
  for (auto& segment : spec_of(s).load) segment.arrivals.to = Time{} + std::chrono::minutes(1);
  s.duration = std::chrono::minutes(3);
  const RunResult r = run_scenario(s);
  EXPECT_TRUE(r.pass()) << failures(r);
  EXPECT_GT(r.value(metric("ingested")), 290'000);
  EXPECT_EQ(r.value(metric("unresolved")), 0);
}

// The on-call scenario runs 10.8 million requests (bench/day_run.py times it); here a 1:20 copy,
// as `run --scale 1:20` makes it, through the outage and the first of the drain: nothing lost, no
// invariant broken, and one deferral per request that met the outage, as the breaker wait makes
// it (before it, each was deferred again every few minutes: about 15 times as many).
TEST(LongScenario, TheOnCallScenarioAt1To20DefersEachRequestThatMetTheOutageOnce) {
  const Scenario full = load_scenario(scenario_path("capacity-serviceb-45m"));
  const std::optional<std::vector<std::string>> sets = full.system->scaled(full, 20);
  ASSERT_TRUE(sets.has_value());
  std::vector<Override> overrides;
  for (const std::string& set : *sets) overrides.push_back(parse_override(set));
  overrides.push_back(parse_override("duration=90m"));
  const Scenario s = load_scenario(scenario_path("capacity-serviceb-45m"), overrides);
  EXPECT_EQ(spec_of(s).platform.concurrency_per_pod, 2u);
  const RunResult r = run_scenario(s);
  EXPECT_EQ(r.value(metric("violations")), 0) << failures(r);
  EXPECT_EQ(r.value(metric("lost")), 0);
  const double met_the_outage = 1500.0 / 20 * 45 * 60;
  EXPECT_GT(r.value(metric("deferrals")), 0.95 * met_the_outage);
  EXPECT_LT(r.value(metric("deferrals")), 1.05 * met_the_outage);
}

// The day-long scenario takes minutes (that is what it measures: see reports/performance.md); here
// its first 15 minutes of load, long enough for the retention to forget thousands of requests.
TEST(LongScenario, TheDayAtProductionRatePassesCutTo15Minutes) {
  Scenario s = load_scenario(scenario_path("flaky-endpoints-1k-24h"));
  ASSERT_TRUE(spec_of(s).platform.retention.has_value());
  for (auto& segment : spec_of(s).load) segment.arrivals.to = Time{} + std::chrono::minutes(15);
  s.duration = std::chrono::minutes(45);
  const RunResult r = run_scenario(s);
  EXPECT_TRUE(r.pass()) << failures(r);
  EXPECT_GT(r.value(metric("ingested")), 800'000);
  EXPECT_GT(r.value(metric("duplicate_ingests")), 0);
  // The retention survives a trip through the scenario writer (property failures are written so).
  const Scenario again = parse_scenario(write_scenario(s), "flaky-endpoints-1k-24h (rewritten)");
  EXPECT_EQ(spec_of(again).platform.retention, spec_of(s).platform.retention);
}

TEST(Determinism, SameSeedSameFingerprintOtherSeedOtherFingerprint) {
  const Scenario s = load_scenario(scenario_path("pod-crash-restart"));
  const RunResult a = run_scenario(s);
  const RunResult b = run_scenario(s);
  RunOptions other;
  other.seed = s.seed + 1;
  const RunResult c = run_scenario(s, std::move(other));
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.events, b.events);
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    if (!std::isnan(a.values[i])) {
      EXPECT_EQ(a.values[i], b.values[i]) << kMetrics[i].info.name;
    }
  }
  EXPECT_NE(a.fingerprint, c.fingerprint);
}

TEST(Determinism, TheTwoStoresRunTheSameSimulation) {
  for (const char* name : {"quickstart", "pod-crash-restart", "store-faults"}) {
    const Scenario s = load_scenario(scenario_path(name));
    RunOptions sqlite;
    sqlite.store = StoreKind::sqlite;
    const RunResult mem = run_scenario(s);
    const RunResult sql = run_scenario(s, std::move(sqlite));
    EXPECT_TRUE(sql.pass()) << name << "\n" << failures(sql);
    EXPECT_EQ(mem.fingerprint, sql.fingerprint) << name;
  }
}

}  // namespace
}  // namespace relaysim::sim::webhook

#include "sim/writer.h"

namespace relaysim::sim::webhook {
namespace {

// write_scenario is how a shrunk property failure becomes a file; it must lose nothing.
TEST(ScenarioWriter, EveryShippedScenarioSurvivesARoundTrip) {
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"/scenarios", "/bench/scenarios", "/reports/mutants"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(RELAYSIM_SOURCE_DIR) + dir)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    }
  }
  ASSERT_GT(files.size(), 9u);
  for (const auto& path : files) {
    const Scenario original = load_scenario(path.string());
    const std::string text = write_scenario(original);
    const Scenario again = parse_scenario(text, path.string() + " (rewritten)");
    EXPECT_EQ(again.expect, original.expect) << path;
    EXPECT_EQ(again.crashes, original.crashes) << path;
    EXPECT_EQ(again.pauses, original.pauses) << path;
    if (original.system->name() == "webhook") {
      EXPECT_TRUE(spec_of(again) == spec_of(original)) << path << "\n" << text;
    } else if (original.system->name() == "outbox") {
      EXPECT_TRUE(outbox::spec_of(again) == outbox::spec_of(original)) << path << "\n" << text;
    } else {
      EXPECT_TRUE(sms::spec_of(again) == sms::spec_of(original)) << path << "\n" << text;
    }
    EXPECT_EQ(write_scenario(again), text) << path;
  }
}

TEST(ScenarioWriter, ARewrittenScenarioRunsTheSameRun) {
  for (const char* name : {"quickstart", "endpoint-429-storm", "pod-crash-restart", "serviceb-url-change", "operator-replays"}) {
    const Scenario original = load_scenario(scenario_path(name));
    const RunResult a = run_scenario(original);
    const RunResult b = run_scenario(parse_scenario(write_scenario(original), name));
    EXPECT_EQ(a.fingerprint, b.fingerprint) << name;
  }
}

TEST(ScenarioWriter, WritesDurationsExactlyInTheLargestUnit) {  // sim/scenario/schema.h
  EXPECT_EQ(write_duration(std::chrono::hours(2)), "2h");
  EXPECT_EQ(write_duration(std::chrono::seconds(90)), "90s");
  EXPECT_EQ(write_duration(std::chrono::milliseconds(1500)), "1500ms");
  EXPECT_EQ(write_duration(Duration{7}), "7ns");
  EXPECT_EQ(write_duration(Duration::zero()), "0s");
}

}  // namespace
}  // namespace relaysim::sim::webhook
