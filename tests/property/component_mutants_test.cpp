// The component properties can fail: with each of the limiters' and the SMS stores' planted bugs
// switched on, at least one of them finds a counterexample. (The SMS gateway lists these mutants
// too, so its property suite must catch them in whole runs; this proves the component properties
// do on their own.)
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <iostream>
#include <sstream>

#include "model/resilience/mutants.h"
#include "model/sms/mutants.h"
#include "tests/property/limiter_properties.h"
#include "tests/property/sms_rule_properties.h"
#include "tests/property/sms_store_properties.h"

namespace relaysim {
namespace {

// True when some property fails with `m` planted. RapidCheck's report goes to a string.
template <class Check>
bool caught_by(const Mutant& m, Check&& check_all) {
  mutants::active() = &m;
  std::ostringstream report;
  std::streambuf* was = std::cerr.rdbuf(report.rdbuf());
  const bool all_hold = check_all();
  std::cerr.rdbuf(was);
  mutants::active() = nullptr;
  return !all_hold;
}

bool caught(const Mutant& m) {
  return caught_by(m, [] {
    return rc::check("reference", &limiter_props::matches_the_reference) &&
           rc::check("bound", &limiter_props::keeps_its_stated_bound) &&
           rc::check("gcra=bucket", &limiter_props::gcra_decides_as_the_token_bucket) &&
           rc::check("shares", &limiter_props::shares_add_up_to_the_limit) &&
           rc::check("pods", &limiter_props::pods_sharing_a_limit_keep_its_bound);
  });
}

bool caught_by_the_rules(const Mutant& m) {
  return caught_by(m, [] {
    return rc::check("failover", &sms_rule_props::fails_over_only_after_a_certain_refusal) &&
           rc::check("async exit", &sms_rule_props::async_mode_ends_as_configured);
  });
}

bool caught_by_the_store_model(const Mutant& m) {
  return caught_by(m, [] { return rc::check("sms stores", &sms_store_props::stores_match_the_model); });
}

TEST(LimiterMutants, WindowRestartsOnSendIsCaught) { EXPECT_TRUE(caught(mutant::window_restarts_on_send)); }
TEST(LimiterMutants, GcraBurstOffByOneIsCaught) { EXPECT_TRUE(caught(mutant::gcra_burst_off_by_one)); }
TEST(LimiterMutants, LimiterShareUndividedIsCaught) { EXPECT_TRUE(caught(mutant::limiter_share_undivided)); }
TEST(LimiterMutants, LimiterCheckThenSetIsCaught) { EXPECT_TRUE(caught(mutant::limiter_check_then_set)); }

TEST(SmsStoreMutants, DedupOnBizIdAloneIsCaught) {
  EXPECT_TRUE(caught_by_the_store_model(sms::mutant::dedup_on_biz_id_alone));
}
TEST(SmsStoreMutants, QuotaChargedPerAttemptIsCaught) {
  EXPECT_TRUE(caught_by_the_store_model(sms::mutant::quota_charged_per_attempt));
}
TEST(SmsStoreMutants, CompensationSkipsStatusIsCaught) {
  EXPECT_TRUE(caught_by_the_store_model(sms::mutant::compensation_skips_status));
}

TEST(SmsRuleMutants, FailoverAfterAmbiguousTimeoutIsCaught) {
  EXPECT_TRUE(caught_by_the_rules(sms::mutant::failover_after_ambiguous_timeout));
}
TEST(SmsRuleMutants, AsyncNeverExitsIsCaught) { EXPECT_TRUE(caught_by_the_rules(sms::mutant::async_never_exits)); }

}  // namespace
}  // namespace relaysim
