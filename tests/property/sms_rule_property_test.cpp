// The SMS decision rules' properties (tests/property/sms_rule_properties.h).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "tests/property/sms_rule_properties.h"

namespace relaysim {
namespace {

RC_GTEST_PROP(SmsRules, FailOverOnlyAfterACertainRefusal, ()) { sms_rule_props::fails_over_only_after_a_certain_refusal(); }
RC_GTEST_PROP(SmsRules, AsyncModeEndsAsConfigured, ()) { sms_rule_props::async_mode_ends_as_configured(); }

}  // namespace
}  // namespace relaysim
