// The retry-and-failover rule (model/sms/submit.h) and provider routing (model/sms/routing.h).
#include <gtest/gtest.h>

#include "model/sms/routing.h"
#include "model/sms/submit.h"

namespace relaysim::sms {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Time t0 = Time{} + seconds(10);

Decision after(SubmitClass outcome, std::uint16_t attempts, bool untried_left, OnUnknown on_unknown = OnUnknown::resend) {
  RetryPolicy retry;
  retry.max_attempts = 4;
  Rng rng(1);
  return decide({outcome, attempts, untried_left, t0, seconds(60), {}}, retry, on_unknown, rng);
}

TEST(SubmitRule, AnAcceptedMessageWaitsForItsReceipt) {
  const Decision d = after(SubmitClass::accepted, 1, true);
  EXPECT_EQ(d.step, Step::submitted);
  EXPECT_EQ(d.due, t0 + seconds(60));
}

TEST(SubmitRule, OnlyACertainRefusalFailsOver) {
  EXPECT_EQ(after(SubmitClass::unavailable, 1, true).step, Step::fail_over);
  EXPECT_EQ(after(SubmitClass::throttled, 1, true).step, Step::fail_over);
  for (const SubmitClass ambiguous : {SubmitClass::timeout, SubmitClass::reset}) {
    const Decision d = after(ambiguous, 1, true);
    EXPECT_EQ(d.step, Step::unknown) << to_string(ambiguous) << ": never sent elsewhere";
    EXPECT_GT(d.due, t0);
  }
  EXPECT_EQ(after(SubmitClass::timeout, 1, true, OnUnknown::fail).step, Step::fail);
  EXPECT_EQ(after(SubmitClass::timeout, 1, true, OnUnknown::fail).reason, Reason::ambiguous);
}

TEST(SubmitRule, WhenEveryProviderSaidNoItRetriesWithBackoffUntilTheAttemptsRunOut) {
  RetryPolicy retry;
  retry.max_attempts = 4;
  Rng rng(7);
  const Decision d = decide({SubmitClass::unavailable, 2, false, t0, seconds(60), {}}, retry, OnUnknown::resend, rng);
  EXPECT_EQ(d.step, Step::retry);
  EXPECT_GE(d.due, t0 + min_delay(retry.backoff, 2));
  EXPECT_LE(d.due, t0 + max_delay(retry.backoff, 2, Duration::zero()));
  EXPECT_EQ(after(SubmitClass::unavailable, 4, true).step, Step::fail);
  EXPECT_EQ(after(SubmitClass::unavailable, 4, true).reason, Reason::exhausted);
  EXPECT_EQ(after(SubmitClass::timeout, 4, true).reason, Reason::exhausted);
}

TEST(SubmitRule, APermanentRefusalFailsAtOnce) {
  const Decision d = after(SubmitClass::refused, 1, true);
  EXPECT_EQ(d.step, Step::fail);
  EXPECT_EQ(d.reason, Reason::refused);
}

TEST(Router, RoundRobinTakesTurnsAndSkipsWhatWasTried) {
  Router r({}, 3);
  EXPECT_EQ(r.pick(t0, 0), 0);
  EXPECT_EQ(r.pick(t0, 0), 1);
  EXPECT_EQ(r.pick(t0, 0), 2);
  EXPECT_EQ(r.pick(t0, 0), 0);
  EXPECT_EQ(r.pick(t0, 0b010), 2) << "1 was tried: its turn passes";
  EXPECT_EQ(r.pick(t0, 0b111), kNoProvider);
}

TEST(Router, EwmaPrefersTheFastestAndPenalisesFastFailures) {
  RoutingConfig c;
  c.policy = RoutingPolicy::ewma;
  Router r(c, 3);
  r.observe(0, t0, SubmitClass::accepted, milliseconds(300));
  r.observe(1, t0, SubmitClass::accepted, milliseconds(50));
  EXPECT_EQ(r.pick(t0, 0), 1);
  EXPECT_EQ(r.pick(t0, 0b010), 2) << "no history: the default (100 ms) beats 300 ms";
  // Provider 1 now fails in a millisecond. Without the penalty it would look fastest.
  r.observe(1, t0 + milliseconds(1), SubmitClass::unavailable, milliseconds(1));
  EXPECT_NE(r.pick(t0 + milliseconds(2), 0), 1);
}

TEST(Router, ErrorRateEjectsOnlyPastTheMinimumVolumeAndReadmitsAfterTheDwell) {
  RoutingConfig c;
  c.policy = RoutingPolicy::error_rate;
  c.min_calls = 10;
  c.max_error_rate = 0.5;
  c.eject_for = seconds(30);
  Router r(c, 2);
  for (int i = 0; i < 9; ++i) r.observe(0, t0, SubmitClass::unavailable, milliseconds(5));
  EXPECT_FALSE(r.ejected(0, t0)) << "nine calls: below the minimum volume";
  r.observe(0, t0, SubmitClass::unavailable, milliseconds(5));
  EXPECT_TRUE(r.ejected(0, t0));
  EXPECT_EQ(r.pick(t0, 0), 1);
  EXPECT_EQ(r.pick(t0, 0b10), 0) << "only the ejected one left: it is tried rather than none";
  EXPECT_FALSE(r.ejected(0, t0 + seconds(30)));
  EXPECT_EQ(r.pick(t0 + seconds(30), 0), 0) << "back, judged afresh";
}

TEST(Router, ARefusalOfOneMessageSaysNothingOfTheProvider) {
  RoutingConfig c;
  c.policy = RoutingPolicy::error_rate;
  c.min_calls = 2;
  Router r(c, 2);
  for (int i = 0; i < 5; ++i) r.observe(0, t0, SubmitClass::refused, milliseconds(5));
  EXPECT_FALSE(r.ejected(0, t0));
  EXPECT_EQ(r.window(0, t0).calls, 0u);
}

TEST(Router, ReceiptsFeedHealth) {
  RoutingConfig c;
  c.policy = RoutingPolicy::error_rate;
  c.min_calls = 4;
  Router r(c, 2);
  for (int i = 0; i < 4; ++i) r.observe(0, t0, SubmitClass::accepted, milliseconds(5));
  EXPECT_FALSE(r.ejected(0, t0));
  for (int i = 0; i < 6; ++i) r.observe_receipt(0, t0, false);  // accepted, then never delivered
  EXPECT_TRUE(r.ejected(0, t0));
}

// An HTTP answer means what the protocol says (docs/live.md); above all, nothing read after the
// request went out is ever a certain refusal, so no such answer lets the message fail over.
TEST(ClassifySubmit, OnlyWhatCertainlySentNothingMayFailOver) {
  EXPECT_EQ(classify_submit(NetError::none, 200), SubmitClass::accepted);
  EXPECT_EQ(classify_submit(NetError::none, 202), SubmitClass::accepted);
  EXPECT_EQ(classify_submit(NetError::none, 429), SubmitClass::throttled);
  EXPECT_EQ(classify_submit(NetError::none, 503), SubmitClass::unavailable);
  EXPECT_EQ(classify_submit(NetError::none, 400), SubmitClass::refused);
  EXPECT_EQ(classify_submit(NetError::none, 422), SubmitClass::refused);
  for (const int status : {100, 301, 500, 502, 504, 599}) {
    EXPECT_EQ(classify_submit(NetError::none, status), SubmitClass::reset) << status;
  }
  EXPECT_EQ(classify_submit(NetError::timeout, 0), SubmitClass::timeout);
  for (const NetError e : {NetError::connect_error, NetError::dns_error, NetError::forbidden_address, NetError::bad_url,
                           NetError::too_late}) {
    EXPECT_EQ(classify_submit(e, 0), SubmitClass::unavailable) << to_string(e);
  }
}

}  // namespace
}  // namespace relaysim::sms
