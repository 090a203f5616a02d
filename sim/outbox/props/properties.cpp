#include "sim/outbox/props/properties.h"

#include <array>

#include "sim/outbox/invariants.h"
#include "sim/outbox/metrics.h"
#include "sim/outbox/props/generators.h"
#include "sim/outbox/spec.h"
#include "sim/outbox/system.h"
#include "sim/run.h"

namespace relaysim::sim::outbox::props {

using relaysim::props::Gate;
using relaysim::props::Property;

namespace {

// A run must end: a case that is still busy after this many events is a livelock, and fails.
constexpr std::uint64_t kMaxEventsPerCase = 3'000'000;

// What must happen at least once across a whole property run, or the suite checks too little.
enum GateId { stale_write, split_brain, leader_moved, duplicate_ambiguous, duplicate_new_leader, inbox_dedup,
              rescued, evicted_slow, redelivered, exhausted, rejected, rolled_back, relock_missed, store_failed,
              publish_refused, handler_died, ordered_retry, kGateCount };
using Coverage = relaysim::props::GateCounts<struct OutboxGates, kGateCount>;
const Gate kGates[] = {
    {"a stale leader's write kept out by the fence", &Coverage::reached<stale_write>},
    {"two pods believing they led one shard", &Coverage::reached<split_brain>},
    {"a shard's leadership moved to another pod", &Coverage::reached<leader_moved>},
    {"a duplicate record after an ambiguous produce", &Coverage::reached<duplicate_ambiguous>},
    {"a duplicate record published by a new leader", &Coverage::reached<duplicate_new_leader>},
    {"a repeated handling recognised by the inbox", &Coverage::reached<inbox_dedup>},
    {"a processing message rescued", &Coverage::reached<rescued>},
    {"a consumer evicted for a late poll", &Coverage::reached<evicted_slow>},
    {"a record redelivered after a rebalance", &Coverage::reached<redelivered>},
    {"a message failed with its attempts exhausted", &Coverage::reached<exhausted>},
    {"a message rejected for good", &Coverage::reached<rejected>},
    {"a business transaction rolled back", &Coverage::reached<rolled_back>},
    {"a record let go at re-lock (its message had moved on)", &Coverage::reached<relock_missed>},
    {"a shard failure survived", &Coverage::reached<store_failed>},
    {"a produce refused by the log", &Coverage::reached<publish_refused>},
    {"a handler died mid-effect", &Coverage::reached<handler_died>},
    {"a message retried under per-key ordering", &Coverage::reached<ordered_retry>},
};

// Runs one case and counts what it reached for the coverage gates.
RunResult run_case(const Scenario& s, StoreKind store) {
  RunResult r = relaysim::props::run_counted(s, store, kMaxEventsPerCase);
  auto& cov = Coverage::counts();
  const auto reached = [&r](std::size_t m) { return r.value(m) > 0; };
  if (reached(metric("stale_writes"))) ++cov[stale_write];
  if (reached(metric("split_brain_s"))) ++cov[split_brain];
  if (r.value(metric("leader_terms")) > spec_of(s).platform.shards) ++cov[leader_moved];
  if (reached(metric("duplicates_ambiguous"))) ++cov[duplicate_ambiguous];
  if (reached(metric("duplicates_new_leader"))) ++cov[duplicate_new_leader];
  if (reached(metric("inbox_dedups"))) ++cov[inbox_dedup];
  if (reached(metric("rescued"))) ++cov[rescued];
  if (reached(metric("evictions_slow"))) ++cov[evicted_slow];
  if (reached(metric("redeliveries"))) ++cov[redelivered];
  if (reached(metric("failed_exhausted"))) ++cov[exhausted];
  if (reached(metric("failed_rejected"))) ++cov[rejected];
  if (reached(metric("rolled_back_operations"))) ++cov[rolled_back];
  if (reached(metric("relocks_missed"))) ++cov[relock_missed];
  if (reached(metric("store_failures"))) ++cov[store_failed];
  if (reached(metric("publishes_refused"))) ++cov[publish_refused];
  if (reached(metric("handler_deaths"))) ++cov[handler_died];
  if (spec_of(s).platform.ordering == relaysim::outbox::Ordering::per_key && reached(metric("retries"))) ++cov[ordered_retry];
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

}  // namespace relaysim::sim::outbox::props
