#include "sim/sms/props/properties.h"

#include <array>

#include "sim/run.h"
#include "sim/sms/invariants.h"
#include "sim/sms/metrics.h"
#include "sim/sms/props/generators.h"
#include "sim/sms/spec.h"
#include "sim/sms/system.h"

namespace relaysim::sim::sms::props {

using relaysim::props::Gate;
using relaysim::props::Property;

namespace {

// A run must end: a case that is still busy after this many events is a livelock, and fails.
constexpr std::uint64_t kMaxEventsPerCase = 3'000'000;

// What must happen at least once across a whole property run, or the suite checks too little.
enum GateId { failover, ambiguous_resent, async_cycle, limit_held, limit_local, duplicate_answered, quota_refused,
              crash_rescued, duplicate_explained, bad_token_refused, scheduled_sent, refunded, opt_out_suppressed,
              quiet_scheduled, quiet_deferred, capped, revoked_refused, resent, store_failed, kGateCount };
using Coverage = relaysim::props::GateCounts<struct SmsGates, kGateCount>;
const Gate kGates[] = {
    {"a submit failed over after a certain refusal", &Coverage::reached<failover>},
    {"an ambiguous submit resent on its provider", &Coverage::reached<ambiguous_resent>},
    {"a pod entered async mode and left it", &Coverage::reached<async_cycle>},
    {"a limit held a message back", &Coverage::reached<limit_held>},
    {"a local limit decided while Redis was down", &Coverage::reached<limit_local>},
    {"a repeated request answered with the first message", &Coverage::reached<duplicate_answered>},
    {"a request refused over quota", &Coverage::reached<quota_refused>},
    {"a crashed pod's claim taken over", &Coverage::reached<crash_rescued>},
    {"a duplicate SMS explained", &Coverage::reached<duplicate_explained>},
    {"a bad token refused", &Coverage::reached<bad_token_refused>},
    {"a message refunded", &Coverage::reached<refunded>},
    {"a scheduled message sent", &Coverage::reached<scheduled_sent>},
    {"a marketing message suppressed after an opt-out", &Coverage::reached<opt_out_suppressed>},
    {"a marketing message made in quiet hours scheduled past them", &Coverage::reached<quiet_scheduled>},
    {"a marketing message due in quiet hours put back", &Coverage::reached<quiet_deferred>},
    {"a marketing message suppressed by the frequency cap", &Coverage::reached<capped>},
    {"a request refused for its revoked grant", &Coverage::reached<revoked_refused>},
    {"a failed message resent", &Coverage::reached<resent>},
    {"a store failure survived", &Coverage::reached<store_failed>},
};

// Runs one case and counts what it reached for the coverage gates.
RunResult run_case(const Scenario& s, StoreKind store) {
  RunResult r = relaysim::props::run_counted(s, store, kMaxEventsPerCase);
  auto& cov = Coverage::counts();
  if (r.value(metric("failovers")) > 0) ++cov[failover];
  if (r.value(metric("submits_ambiguous")) > 0 && r.value(metric("rescans")) > 0) ++cov[ambiguous_resent];
  if (r.value(metric("async_entered")) > 0 && r.value(metric("async_left")) > 0) ++cov[async_cycle];
  if (r.value(metric("limit_held")) > 0) ++cov[limit_held];
  if (r.value(metric("limit_local")) > 0) ++cov[limit_local];
  if (r.value(metric("duplicate_requests")) > 0) ++cov[duplicate_answered];
  if (r.value(metric("quota_refused")) > 0) ++cov[quota_refused];
  if (r.value(metric("crashes")) > 0 && r.value(metric("duplicates_rescued")) + r.value(metric("rescans")) > 0) ++cov[crash_rescued];
  if (r.value(metric("duplicate_sms")) > 0 && r.value(metric("duplicates_unexplained")) == 0) ++cov[duplicate_explained];
  if (r.value(metric("auth_refused")) > 0) ++cov[bad_token_refused];
  if (r.value(metric("refunds")) > 0) ++cov[refunded];
  if (r.value(metric("suppressed_opted_out")) > 0) ++cov[opt_out_suppressed];
  if (r.value(metric("campaign_quiet")) > 0) ++cov[quiet_scheduled];
  if (r.value(metric("marketing_deferred")) > 0) ++cov[quiet_deferred];
  if (r.value(metric("suppressed_frequency_cap")) > 0) ++cov[capped];
  if (r.value(metric("revoked_refused")) > 0) ++cov[revoked_refused];
  if (r.value(metric("resends")) > 0) ++cov[resent];
  if (r.value(metric("store_failures")) > 0) ++cov[store_failed];
  for (const LoadSegment& l : spec_of(s).load) {
    if (l.kind == relaysim::sms::Kind::scheduled && r.value(metric("sms_sent")) > 0) {
      ++cov[scheduled_sent];
      break;
    }
  }
  return r;
}

const relaysim::props::Cases& cases() {
  static const relaysim::props::Cases c{[] { return *scenarios(); }, &run_case, kMaxEventsPerCase, "messages"};
  return c;
}

const std::vector<Property>& properties() {
  static const std::vector<Property> list = relaysim::props::standard_properties(
      cases(), kInvariants, [](const Scenario& a, const Scenario& b) { return spec_of(a) == spec_of(b); });
  return list;
}

std::span<const Gate> gates() { return kGates; }

}  // namespace

relaysim::props::Suite suite() { return {system().name(), &properties, &gates}; }

}  // namespace relaysim::sim::sms::props
