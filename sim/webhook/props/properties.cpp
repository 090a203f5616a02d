#include "sim/webhook/props/properties.h"

#include <rapidcheck.h>

#include <array>

#include "sim/run.h"
#include "sim/webhook/spec.h"
#include "sim/webhook/invariants.h"
#include "sim/webhook/metrics.h"
#include "sim/webhook/props/generators.h"
#include "sim/webhook/system.h"

namespace relaysim::sim::webhook::props {

using relaysim::props::failed_with;
using relaysim::props::first_violation;
using relaysim::props::Gate;
using relaysim::props::invariant_property;
using relaysim::props::liveness_property;
using relaysim::props::Property;
using relaysim::props::round_trip_property;
using relaysim::props::same_seed_property;
using relaysim::props::stores_agree_property;
using relaysim::props::within_budget;
using relaysim::props::write_failure;

namespace {

// A run must end: a case that is still busy after this many events is a livelock, and fails.
constexpr std::uint64_t kMaxEventsPerCase = 2'000'000;

// What must happen at least once across a whole property run, or the suite checks too little.
enum GateId { breaker_cycle, dead_lettered_at_deadline, duplicate_from_lost_response, crashed_lease_rescued,
              retry_after_honoured, duplicate_ingest_answered, store_failure_survived, tenant_told_of_dead_letter,
              deferred_on_serviceb, lone_request_retried, failure_replayed, replay_refused, create_with_no_pod_up,
              kGateCount };
using Coverage = relaysim::props::GateCounts<struct WebhookGates, kGateCount>;
const Gate kGates[] = {
    {"breaker open -> half-open -> closed", &Coverage::reached<breaker_cycle>},
    {"a request dead-lettered at its deadline", &Coverage::reached<dead_lettered_at_deadline>},
    {"an endpoint duplicate explained by a lost response", &Coverage::reached<duplicate_from_lost_response>},
    {"a crashed pod's leased request rescued", &Coverage::reached<crashed_lease_rescued>},
    {"a Retry-After honoured", &Coverage::reached<retry_after_honoured>},
    {"a duplicate ingest answered with the original", &Coverage::reached<duplicate_ingest_answered>},
    {"a store failure survived", &Coverage::reached<store_failure_survived>},
    {"a tenant told of a dead-lettered request", &Coverage::reached<tenant_told_of_dead_letter>},
    {"a request deferred while ServiceB could not answer", &Coverage::reached<deferred_on_serviceb>},
    {"a lone request (sparse load) retried", &Coverage::reached<lone_request_retried>},
    {"a failed or dead-lettered request replayed", &Coverage::reached<failure_replayed>},
    {"a replay refused (not terminal, or forgotten)", &Coverage::reached<replay_refused>},
    {"a create refused because no pod was up", &Coverage::reached<create_with_no_pod_up>},
};

// Runs one case and counts what it reached for the coverage gates.
RunResult run_case(const Scenario& s, StoreKind store) {
  RunResult r = relaysim::props::run_counted(s, store, kMaxEventsPerCase);
  auto& cov = Coverage::counts();
  auto v = [&r](std::size_t m) { return r.value(m); };
  if (v(metric("breaker_closed")) > 0 && v(metric("breaker_opened")) > 0) ++cov[breaker_cycle];
  if (v(metric("dead_lettered_deadline")) > 0) ++cov[dead_lettered_at_deadline];
  if (v(metric("duplicates_lost_response")) > 0) ++cov[duplicate_from_lost_response];
  if (v(metric("rescued")) > 0 && v(metric("crashes")) > 0) ++cov[crashed_lease_rescued];
  if (v(metric("retry_after_honoured")) > 0) ++cov[retry_after_honoured];
  if (v(metric("duplicate_ingests")) > 0) ++cov[duplicate_ingest_answered];
  if (v(metric("store_failures")) > 0 && r.ledger.total() == 0) ++cov[store_failure_survived];
  if (v(metric("notifications")) > 0 && v(metric("dead_lettered")) > 0) ++cov[tenant_told_of_dead_letter];
  if (v(metric("deferrals")) > 0) ++cov[deferred_on_serviceb];
  if (v(metric("ingested")) <= 3 && v(metric("attempts")) > v(metric("ingested"))) ++cov[lone_request_retried];
  if (v(metric("replayed")) > 0) ++cov[failure_replayed];
  if (v(metric("replays_refused")) > 0) ++cov[replay_refused];
  if (v(metric("rejected_ingests")) > 0) ++cov[create_with_no_pod_up];
  return r;
}

std::string_view id(Invariant i) { return kInvariants[index(i)].id; }

const relaysim::props::Cases& cases() {
  static const relaysim::props::Cases c{[] { return *scenarios(); }, &run_case, kMaxEventsPerCase, "requests"};
  return c;
}

const std::vector<Property>& properties() {
  static const std::vector<Property> list = [] {
    std::vector<Property> v;
    const Invariant order[] = {Invariant::deadline, Invariant::nodup, Invariant::retry, Invariant::breaker,
                               Invariant::url,      Invariant::idem,  Invariant::noloss};
    for (StoreKind store : {StoreKind::memory, StoreKind::sqlite}) {
      for (Invariant inv : order) v.push_back(invariant_property(cases(), id(inv), index(inv), store));
    }
    v.push_back(liveness_property(cases()));
    v.push_back({"Fencing_with_forced_short_lease", "W-nodup (fencing)", false, [] {
                   // With a lease forced too short, duplicate in-flight deliveries are expected
                   // (that is the point of forcing it); a stale claimant's completion must still
                   // never be applied, and nothing may be lost.
                   GenOptions forced;
                   forced.force_short_lease = true;
                   const Scenario s = *scenarios(forced);
                   if (!within_budget()) return;
                   const RunResult r = run_case(s, StoreKind::memory);
                   const bool stale = r.value(metric("stale_completions_applied")) > 0;
                   if (stale || r.ledger.count(index(Invariant::noloss)) > 0) {
                     const std::string what = stale ? first_violation(r, id(Invariant::nodup)) : first_violation(r, id(Invariant::noloss));
                     RC_FAIL(failed_with(what + "\n  shrunk scenario: " +
                                         write_failure("Fencing_with_forced_short_lease", s, r, what)));
                   }
                 }});
    // The SQLite store keeps every row: with a retention the memory store forgets keys it does
    // not, and the runs differ by design.
    v.push_back(stores_agree_property(cases(), [](Scenario& s) { spec_of(s).platform.retention.reset(); }));
    v.push_back(round_trip_property(cases(), [](const Scenario& a, const Scenario& b) { return spec_of(a) == spec_of(b); }));
    v.push_back(same_seed_property(cases()));
    return v;
  }();
  return list;
}

std::span<const Gate> gates() { return kGates; }

}  // namespace

relaysim::props::Suite suite() { return {system().name(), &properties, &gates}; }

}  // namespace relaysim::sim::webhook::props
