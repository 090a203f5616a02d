#include "tests/property/sms_rule_properties.h"

#include <rapidcheck.h>

#include "model/sms/submit.h"
#include "model/sms/sync_async.h"

namespace relaysim::sms_rule_props {

using namespace relaysim::sms;
using std::chrono::milliseconds;
using std::chrono::seconds;

void fails_over_only_after_a_certain_refusal() {
  RetryPolicy retry;
  retry.max_attempts = *rc::gen::inRange<std::uint16_t>(1, 8);
  retry.backoff.kind = *rc::gen::element(BackoffKind::exponential, BackoffKind::fixed);
  retry.backoff.jitter = *rc::gen::element(Jitter::none, Jitter::full, Jitter::equal, Jitter::decorrelated);
  const auto on_unknown = *rc::gen::element(OnUnknown::resend, OnUnknown::fail);
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  SubmitContext c;
  // gen::element is uniform; inRange leans to small values while the size is small.
  c.outcome = *rc::gen::element(SubmitClass::accepted, SubmitClass::throttled, SubmitClass::unavailable,
                                SubmitClass::refused, SubmitClass::timeout, SubmitClass::reset);
  c.attempts = *rc::gen::element<std::uint16_t>(1, 2, 3, 5, 7, 8, 9);
  c.untried_provider_left = *rc::gen::arbitrary<bool>();
  c.now = Time{} + seconds(*rc::gen::inRange(0, 1000));
  c.receipt_timeout = seconds(*rc::gen::inRange(1, 600));
  RC_LOG() << to_string(c.outcome) << " attempt " << c.attempts << " of " << retry.max_attempts
           << (c.untried_provider_left ? ", a provider left" : "") << "\n";
  const Decision d = decide(c, retry, on_unknown, rng);
  if (is_ambiguous(c.outcome)) RC_ASSERT(d.step != Step::fail_over);
  if (d.step == Step::fail_over) RC_ASSERT(may_fail_over(c.outcome) && c.untried_provider_left);
  if (d.step == Step::fail_over || d.step == Step::retry || d.step == Step::unknown) {
    RC_ASSERT(c.attempts < retry.max_attempts);
  }
  if (d.step == Step::retry || d.step == Step::unknown) RC_ASSERT(d.due > c.now);
  RC_ASSERT((d.step == Step::submitted) == (c.outcome == SubmitClass::accepted));
}

void async_mode_ends_as_configured() {
  SyncAsyncConfig c;
  c.enabled = true;
  c.latency.over = milliseconds(500);
  c.latency.consecutive = *rc::gen::inRange<std::uint32_t>(1, 6);
  const bool timer = *rc::gen::arbitrary<bool>();
  c.exit = timer ? SyncAsyncConfig::Exit::after : SyncAsyncConfig::Exit::probe;
  c.after = seconds(*rc::gen::inRange(1, 120));
  c.probe_every = *rc::gen::inRange<std::uint32_t>(1, 20);
  c.min_probes = *rc::gen::inRange<std::uint32_t>(1, 5);
  SyncAsyncController s(c);
  Time now = Time{} + seconds(10);
  for (std::uint32_t i = 0; i < c.latency.consecutive; ++i) s.observe(now, seconds(1), false, SendPath::sync);
  RC_ASSERT(s.async());
  const Time entered = s.entered_at();
  std::uint32_t good_in_a_row = 0;
  const int sends = *rc::gen::inRange(1, 400);
  for (int i = 0; i < sends && s.async(); ++i) {
    now += milliseconds(*rc::gen::inRange(1, 2000));
    ModeChange change;
    const SendPath path = s.route(now, change);
    if (timer) {
      RC_ASSERT(change.left == (now >= entered + c.after));
      RC_ASSERT((path == SendPath::sync) == change.left);
      continue;
    }
    RC_ASSERT(path != SendPath::sync);
    if (path != SendPath::probe) continue;
    const bool good = *rc::gen::arbitrary<bool>();
    good_in_a_row = good ? good_in_a_row + 1 : 0;
    const ModeChange after = s.observe(now, good ? milliseconds(100) : milliseconds(900), false, path);
    RC_ASSERT(after.left == (good_in_a_row >= c.min_probes));
  }
}

}  // namespace relaysim::sms_rule_props
