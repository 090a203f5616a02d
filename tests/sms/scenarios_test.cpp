// Every shipped SMS scenario passes on both stores; runs are deterministic; the two stores agree
// event for event; scenario mistakes in the SMS section are located.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "model/core/sanitizers.h"
#include "sim/run.h"
#include "sim/loader.h"
#include "sim/sms/metrics.h"
#include "sim/sms/spec.h"
#include "tests/scenario_helpers.h"

namespace relaysim::sim::sms {
namespace {

const std::string kShipped[] = {"sms-quickstart",     "sms-provider-outage-failover", "sms-crash-compensation",
                                "sms-provider-slowdown-async", "sms-redis-down",    "sms-client-retries",
                                "sms-scheduled-sends", "sms-quota-exhaustion"};

using testing::failures;
using testing::scenario_path;

class ShippedSmsScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedSmsScenario, PassesOnBothStoresWithTheSameRun) {
  const Scenario s = load_scenario(scenario_path(GetParam()));
  const RunResult memory = run_scenario(s);
  EXPECT_TRUE(memory.pass()) << failures(memory);
  EXPECT_GT(memory.value(metric("accepted")), 0);
  RunOptions o;
  o.store = StoreKind::sqlite;
  const RunResult sqlite = run_scenario(s, std::move(o));
  EXPECT_TRUE(sqlite.pass()) << failures(sqlite);
  // The two stores keep one contract: the whole run, event for event, is the same.
  EXPECT_EQ(memory.fingerprint, sqlite.fingerprint);
}

INSTANTIATE_TEST_SUITE_P(All, ShippedSmsScenario, ::testing::ValuesIn(kShipped), [](const auto& p) {
  std::string n = p.param;
  for (char& c : n) c = c == '-' ? '_' : c;
  return n;
});

// Scenarios too large to run twice here (the SQLite run would take minutes): run in memory only.
// The stores' agreement on campaigns is shown by CampaignsRunTheSameOnBothStores below.
const std::string kLarge[] = {"sms-marketing-campaign"};

TEST(LargeSmsScenario, TheMillionRecipientCampaignPasses) {
  if (kAddressSanitizer) GTEST_SKIP() << "too slow under the sanitizers; CampaignsRunTheSameOnBothStores covers the same code";
  const Scenario s = load_scenario(scenario_path(kLarge[0]));
  const RunResult r = run_scenario(s);
  EXPECT_TRUE(r.pass()) << failures(r);
  EXPECT_GE(r.value(metric("campaign_messages")), 1e6);
}

TEST(ShippedSmsScenarios, EverySmsFileInScenariosIsTested) {
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(RELAYSIM_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() == ".yaml" && load_scenario(entry.path().string()).system->name() == "sms") ++n;
  }
  EXPECT_EQ(n, std::size(kShipped) + std::size(kLarge)) << "a new SMS scenario file needs a line in kShipped";
}

TEST(SmsRun, TheSameSeedRunsTheSameRunAndAnotherSeedAnother) {
  const Scenario s = load_scenario(scenario_path("sms-quickstart"));
  const RunResult a = run_scenario(s);
  const RunResult b = run_scenario(s);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  RunOptions o;
  o.seed = s.seed + 1;
  const RunResult c = run_scenario(s, std::move(o));
  EXPECT_NE(a.fingerprint, c.fingerprint);
  EXPECT_TRUE(c.pass()) << failures(c);
}

std::string error_of(const std::string& text) {
  try {
    parse_scenario(text, "t.yaml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

const char* const kMinimal = R"(name: t
system: sms
duration: 1m
sms:
  businesses: [{name: shop}]
  providers: [{name: alpha}]
  load: [{business: shop, rate: 1/s}]
)";

TEST(SmsScenario, AMinimalScenarioReads) { EXPECT_EQ(error_of(kMinimal), ""); }

// A small campaign with every marketing rule at work: quiet hours in three zones, users opting out
// while their messages wait, and a second campaign meeting the frequency cap.
const char* const kCampaigns = R"(name: campaigns
system: sms
seed: 5
duration: 30h
sms:
  platform:
    pods: 2
    marketing: {quiet_hours: {from: "21:00", to: "08:00"}, frequency_cap: {count: 1, per: 24h}, chunk: 500}
  businesses: [{name: shop, quota: 100000}]
  providers:
    - {name: alpha, error_rate: 2%, lost_answers: 1%}
    - {name: beta, error_rate: 2%}
  directory:
    users: 20000
    utc_offsets: ["+00:00", "+08:00", "-05:00"]
    opt_outs: {rate: 2/s, from: 6h, to: 14h}
  load:
    - {business: shop, kind: marketing, burst: 1, at: 6h, filter: "opt_in and not tags has churned"}
    - {business: shop, kind: marketing, burst: 1, at: 13h, filter: "tags has vip or region = north"}
faults:
  - {at: 6h00m02s, crash: pod-1, restart_after: 10s}
expect:
  violations: 0
  unresolved: 0
  campaigns_done: 2
  suppressed_opted_out: "> 0"
  suppressed_frequency_cap: "> 0"
  campaign_quiet: "> 0"
)";

TEST(SmsScenario, CampaignsRunTheSameOnBothStores) {
  const Scenario s = parse_scenario(kCampaigns, "campaigns.yaml");
  const RunResult memory = run_scenario(s);
  EXPECT_TRUE(memory.pass()) << failures(memory);
  RunOptions o;
  o.store = StoreKind::sqlite;
  const RunResult sqlite = run_scenario(s, std::move(o));
  EXPECT_TRUE(sqlite.pass()) << failures(sqlite);
  EXPECT_EQ(memory.fingerprint, sqlite.fingerprint);
}

TEST(SmsScenario, ABadFilterIsRefusedAtItsCharacter) {
  std::string text = kCampaigns;
  text.replace(text.find("\"tags has vip or region = north\""), 32, "\"tags has vip or region = nowhere\"");
  const std::string e = error_of(text);
  // Line 19, the filter's quote at column 68, "nowhere" 26 characters into the filter.
  EXPECT_NE(e.find("t.yaml:19:94:"), std::string::npos) << e;
  EXPECT_NE(e.find("load[1].filter"), std::string::npos) << e;
  EXPECT_NE(e.find("no region is named 'nowhere'"), std::string::npos) << e;
  EXPECT_NE(e.find("character 26 of the filter"), std::string::npos) << e;
}

TEST(SmsScenario, AMisspeltKeyNamesItsLineColumnAndASuggestion) {
  std::string text = kMinimal;
  text.replace(text.find("providers: [{name: alpha}]"), 26, "providers: [{name: alpha, lost_answer: 1%}]");
  const std::string e = error_of(text);
  EXPECT_NE(e.find("t.yaml:6:"), std::string::npos) << e;
  EXPECT_NE(e.find("lost_answer"), std::string::npos) << e;
  EXPECT_NE(e.find("lost_answers"), std::string::npos) << e;
}

TEST(SmsScenario, LoadNamingAnUnknownBusinessIsRefusedWithTheKnownOnes) {
  std::string text = kMinimal;
  text.replace(text.find("business: shop, rate"), 14, "business: shoe");
  const std::string e = error_of(text);
  EXPECT_NE(e.find("load[0].business"), std::string::npos) << e;
  EXPECT_NE(e.find("shop"), std::string::npos) << e;
}

TEST(SmsScenario, ALeaseShorterThanAClaimsSubmitsIsRefusedAtTheLease) {
  std::string text = kMinimal;
  text.replace(text.find("sms:\n"), 5, "sms:\n  platform: {send_timeout: 10s, lease: 15s}\n");
  text.replace(text.find("providers: [{name: alpha}]"), 26, "providers: [{name: alpha}, {name: beta}]");
  const std::string e = error_of(text);
  EXPECT_NE(e.find("sms.platform.lease"), std::string::npos) << e;
  EXPECT_NE(e.find("t.yaml:5:"), std::string::npos) << e;
}

}  // namespace
}  // namespace relaysim::sim::sms
