// The SMS Store contract (model/sms/store.h) under random sequences, against a model and with the
// two stores compared row by row (tests/property/sms_store_properties.h).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "tests/property/sms_store_properties.h"

namespace relaysim {
namespace {

RC_GTEST_PROP(SmsStores, MatchTheModelAndEachOther, ()) { sms_store_props::stores_match_the_model(); }

}  // namespace
}  // namespace relaysim
