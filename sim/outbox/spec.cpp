#include "sim/outbox/spec.h"

#include <algorithm>

#include "sim/system.h"
#include "sim/world/policies.h"

namespace relaysim::sim::outbox {

namespace {

using model::RelayConfig;
using model::TypePolicy;

const Schema<TypePolicy>& type_schema() {
  static const Schema<TypePolicy> schema = [] {
    Schema<TypePolicy> s(Style::flow, "A message type and how its failed handlings are retried.");
    s.key("name", &TypePolicy::name, name_codec(), "its name", opt::required());
    s.include(&TypePolicy::backoff, backoff_schema());
    s.key("max_attempts", &TypePolicy::max_attempts, integer_codec(model::TypePolicy::kMaxAttempts),
          "handlings in all; then the message fails as `exhausted`");
    return s;
  }();
  return schema;
}

}  // namespace

const Schema<RelayConfig>& platform_schema() {
  static const Schema<RelayConfig> schema = [] {
    Schema<RelayConfig> s(Style::block, "The relay's policies: what is under test.");
    s.key("pods", &RelayConfig::pods, integer_codec(RelayConfig::kPods),
          "pods of the service, named `pod-0`, ...; each may lead shards and each consumes");
    s.key("shards", &RelayConfig::shards, integer_codec(RelayConfig::kShards),
          "database shards; bucket b lives on shard b mod shards, and each shard has its own leader");
    s.key("buckets", &RelayConfig::buckets, integer_codec(RelayConfig::kBuckets), "buckets entities are hashed to");
    s.key("lease", &RelayConfig::lease, duration_codec(RelayConfig::kLease), "a shard leader's lease at the coordinator");
    s.key("renew_every", &RelayConfig::renew_every, duration_codec(RelayConfig::kRenewEvery),
          "how often a leader renews its lease (and others ask for it)");
    s.key("scan_every", &RelayConfig::scan_every, duration_codec(RelayConfig::kScanEvery),
          "how often a leader scans its shard for due pending messages (at once again after a full scan)");
    s.key("batch", &RelayConfig::batch, integer_codec(RelayConfig::kBatch), "messages per scan (and per rescue)");
    s.key("order", &RelayConfig::order,
          choice_codec(model::kPublishOrderNames),
          "`publish_then_mark` (the seed's: a leader dying between the two leaves duplicate records) or "
          "`mark_then_publish` (it leaves messages processing until the rescuer returns them)");
    s.key("publish_timeout", &RelayConfig::publish_timeout, duration_codec(RelayConfig::kPublishTimeout), "one produce's timeout");
    s.key("publish_retries", &RelayConfig::publish_retries, integer_codec(RelayConfig::kPublishRetries),
          "times a timed-out produce is repeated in the same producer session (the log writes it once)");
    s.key("processing_timeout", &RelayConfig::processing_timeout, duration_codec(RelayConfig::kProcessingTimeout),
          "a processing message not finished by then is returned to pending by the rescuer; must outlast "
          "handle_timeout + relock_wait");
    s.key("rescue_every", &RelayConfig::rescue_every, duration_codec(RelayConfig::kRescueEvery), "how often each leader runs the rescuer");
    s.key("concurrency_per_pod", &RelayConfig::concurrency_per_pod, integer_codec(RelayConfig::kConcurrencyPerPod),
          "records a pod's consumer handles at once");
    s.renamed("concurrency", "concurrency_per_pod");
    s.key("max_poll_records", &RelayConfig::max_poll_records, integer_codec(RelayConfig::kMaxPollRecords),
          "records one poll returns at most, shared among the consumer's partitions");
    s.key("handle_timeout", &RelayConfig::handle_timeout, duration_codec(RelayConfig::kHandleTimeout), "one handling's timeout");
    s.key("relock_wait", &RelayConfig::relock_wait, duration_codec(RelayConfig::kRelockWait),
          "how long a consumer waits for a message its leader has published and not yet marked");
    s.key("ordering", &RelayConfig::ordering,
          choice_codec(model::kOrderingNames),
          "`per_key`: an entity's messages are handled one at a time, in the order written (a failing one holds "
          "its entity's later ones); `none`: no promise");
    s.key("types", &RelayConfig::types, list_codec(map_codec(type_schema()), "list, below"),
          "message types with their retry policies (the first is the default)");
    s.key("store_retry", &RelayConfig::store_retry, duration_codec(RelayConfig::kStoreRetry),
          "after a shard's call fails, how long a pod leaves that shard alone");
    s.check([](const Reader& r, const Map& m, RelayConfig& c) {
      unique_names(r, m, "types", c.types, [](const model::TypePolicy& t) -> const std::string& { return t.name; }, "message type");
    });
    return s;
  }();
  return schema;
}

namespace {

const Schema<LoadSegment>& load_schema() {
  static const Schema<LoadSegment> schema = [] {
    Schema<LoadSegment> s(Style::flow,
                          "A segment of the business load: operations at a rate from `from` to `to`, or a burst at "
                          "`at`, each on one entity, round robin over the pods that are up.");
    s.include(&LoadSegment::arrivals, arrival_schema());
    s.key("keys", &LoadSegment::keys, integer_codec<std::uint64_t>(1, 100'000'000), "distinct entities");
    s.key("skew", &LoadSegment::skew, number_codec(0, 5),
          "Zipf exponent of how operations pick entities (0: evenly; 1 and above: a few entities are hot)");
    s.key("messages", &LoadSegment::messages, integer_codec<std::uint32_t>(1, 100), "outbox rows each operation writes");
    s.key("type", &LoadSegment::type_name, text_codec(), "their message type, by name", opt::shown("the first"));
    s.key("rollbacks", &LoadSegment::rollbacks, fraction_codec(),
          "share of operations whose business rule fails after the writes, so the transaction rolls back");
    return s;
  }();
  return schema;
}

const Schema<ShardFault>& shard_fault_schema() {
  static const Schema<ShardFault> schema = [] {
    Schema<ShardFault> s(Style::flow, "One shard's database failing for a while (`faults:` store faults strike every shard).");
    s.key("shard", &ShardFault::shard, integer_codec<std::uint32_t>(0, 255), "which shard", opt::required());
    s.include(&ShardFault::window, window_schema());
    s.key("store", &ShardFault::failure,
          choice_codec(kStoreFailureNames, {StoreFailure::busy, StoreFailure::full, StoreFailure::io}),
          "how it fails: `busy` and `io` fail every call, `full` every write (reads still work)");
    return s;
  }();
  return schema;
}

}  // namespace

const Schema<OutboxSpec>& spec_schema() {
  static const Schema<OutboxSpec> schema = [] {
    Schema<OutboxSpec> s(Style::block,
                         "The outbox relay's section: its policies, the log, the coordinator, the downstream and the "
                         "business load.");
    s.key("platform", &OutboxSpec::platform, map_codec(platform_schema()), "the relay's policies");
    s.key("log", &OutboxSpec::log, map_codec(log_schema()), "the partitioned log");
    s.key("coordinator", &OutboxSpec::coordinator, map_codec(coordinator_schema()), "the lease service");
    s.key("downstream", &OutboxSpec::downstream, map_codec(downstream_schema()), "what the consumers' handling changes");
    s.key("shard_faults", &OutboxSpec::shard_faults, list_codec(map_codec(shard_fault_schema()), "list, below"),
          "faults of single shards", opt::shown("none"));
    s.key("load", &OutboxSpec::load, list_codec(map_codec(load_schema()), "list of segments, below"),
          "the business operations", opt::shown("no load"));
    s.check([](const Reader& r, const Map& m, OutboxSpec& spec) {
      for (std::size_t i = 0; i < spec.load.size(); ++i) {
        LoadSegment& l = spec.load[i];
        if (l.type_name.empty()) {
          l.type = 0;
          continue;
        }
        const auto& types = spec.platform.types;
        const auto it = std::find_if(types.begin(), types.end(), [&](const model::TypePolicy& t) { return t.name == l.type_name; });
        if (it == types.end()) {
          std::string known;
          for (const model::TypePolicy& t : types) known += (known.empty() ? "" : ", ") + t.name;
          r.fail(m["load"][i]["type"], m.child("load") + "[" + std::to_string(i) + "].type",
                 "no message type is named '" + l.type_name + "' (types: " + known + ")");
        }
        l.type = static_cast<std::uint32_t>(it - types.begin());
      }
      for (std::size_t i = 0; i < spec.shard_faults.size(); ++i) {
        if (spec.shard_faults[i].shard >= spec.platform.shards) {
          r.fail(m["shard_faults"][i]["shard"], m.child("shard_faults") + "[" + std::to_string(i) + "].shard",
                 "the platform has " + std::to_string(spec.platform.shards) + " shards (0 .. " +
                     std::to_string(spec.platform.shards - 1) + ")");
        }
      }
      // A lease counts from when it was asked for, so an answer slower than the lease grants a
      // lease already over. A coordinator that slow as a rule (not in a slow window) leaves every
      // shard without a leader for the whole run: nothing is ever published.
      if (spec.coordinator.latency.p50 >= spec.platform.lease) {
        m.fail_at("coordinator.latency", "its p50 of " + format_duration(spec.coordinator.latency.p50) +
                                             " is not shorter than platform.lease (" + format_duration(spec.platform.lease) +
                                             "): most grants would come back expired and no pod would lead");
      }
      m.refuse(model::validate(spec.platform), "platform");
    });
    return s;
  }();
  return schema;
}

const OutboxSpec& spec_of(const Scenario& s) {
  const auto* w = dynamic_cast<const OutboxSpec*>(&s.spec());
  RELAYSIM_ASSERT(w != nullptr, "a scenario of the outbox system");
  return *w;
}

OutboxSpec& spec_of(Scenario& s) {
  auto* w = dynamic_cast<OutboxSpec*>(&s.spec());
  RELAYSIM_ASSERT(w != nullptr, "a scenario of the outbox system");
  return *w;
}

}  // namespace relaysim::sim::outbox
