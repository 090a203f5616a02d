// The outbox relay's section of a scenario (`outbox:`): the relay's policies, the log, the
// coordinator, the downstream, faults of single shards, and the business load.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/outbox/config.h"
#include "sim/outbox/downstream.h"
#include "sim/outbox/log.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/schema.h"
#include "sim/world/arrivals.h"
#include "sim/world/coordinator.h"

namespace relaysim::sim::outbox {

namespace model = relaysim::outbox;

// One segment of the business load: operations on entities, each writing `messages` outbox rows.
struct LoadSegment {
  ArrivalSpec arrivals;
  std::uint64_t keys = 10'000;  // distinct entities
  double skew = 0.0;            // Zipf exponent over the entities (0: uniform; 1: a few are hot)
  std::uint32_t messages = 1;   // outbox rows per operation
  std::uint32_t type = 0;       // their type (index into platform.types), resolved from type_name
  std::string type_name;        // as written; empty: the first type
  double rollbacks = 0.0;       // share of operations whose business rule fails after the writes
  bool operator==(const LoadSegment&) const = default;
};

// A fault of one shard's database (faults: store: ... strikes every shard).
struct ShardFault {
  std::uint32_t shard = 0;
  Window window;
  StoreFailure failure = StoreFailure::busy;
  bool operator==(const ShardFault&) const = default;
};

struct OutboxSpec final : SystemSpec {
  model::RelayConfig platform{};
  LogSpec log{};
  CoordinatorSpec coordinator{};
  DownstreamSpec downstream{};
  std::vector<ShardFault> shard_faults;
  std::vector<LoadSegment> load;

  std::unique_ptr<SystemSpec> clone() const override { return std::make_unique<OutboxSpec>(*this); }
  std::uint32_t processes() const override { return platform.pods; }
  bool operator==(const OutboxSpec& o) const {
    return platform == o.platform && log == o.log && coordinator == o.coordinator && downstream == o.downstream &&
           shard_faults == o.shard_faults && load == o.load;
  }
};

const Schema<OutboxSpec>& spec_schema();
// The relay's policies (a scenario's `outbox.platform`, and a serve file's `platform:`).
const Schema<model::RelayConfig>& platform_schema();

const OutboxSpec& spec_of(const Scenario& s);
OutboxSpec& spec_of(Scenario& s);

}  // namespace relaysim::sim::outbox
