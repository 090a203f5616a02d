// Node: one pod of the service that owns the outbox — its business API (operate), its relay
// (model/outbox/relay.h: the leader of whichever shards it holds) and its consumer
// (model/outbox/consumer.h), wired from the configuration and the ports the shell provides.
//
// operate() is the business operation of seed 002: in ONE transaction of the entity's shard, it
// writes the entity's row (its version one higher) and an outbox_request row per message, so the
// messages exist exactly when the business change does. Nothing is published here: the shard's
// leader finds the rows by scanning. A business rule that fails after the writes rolls the
// transaction back, and then nothing of it — rows or messages — ever existed.
//
// A node holds only in-memory state; everything durable is in the shards' stores. Destroying a
// node is a crash: its leases expire and others take its shards; its consumer's partitions go to
// others, who read again from the group's committed offsets.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/core/names.h"
#include "model/outbox/config.h"
#include "model/outbox/consumer.h"
#include "model/outbox/relay.h"

namespace relaysim::outbox {

struct OperationRequest {
  EntityKey key = 0;
  std::span<const std::uint32_t> types;  // one message per entry, of that type
  bool fails = false;                    // its business rule fails after the writes: roll back
};

enum class OperationOutcome : std::uint8_t { committed, rolled_back, unavailable };
inline constexpr auto kOperationOutcomeNames = names<OperationOutcome>({
    {OperationOutcome::committed, "committed"}, {OperationOutcome::rolled_back, "rolled_back"},
    {OperationOutcome::unavailable, "unavailable"}});
constexpr std::string_view to_string(OperationOutcome o) { return kOperationOutcomeNames[o]; }

struct OperationResult {
  OperationOutcome outcome = OperationOutcome::committed;
  ShardId shard = 0;
  RowId first = 0;  // committed: its first message
  std::uint64_t version = 0;
};

class Node {
 public:
  Node(PodId pod, const RelayConfig& config, const NodePorts& ports);
  void start();
  OperationResult operate(const OperationRequest& request);
  // A draining pod: its relay gives its leases back and its consumer leaves the group once the
  // records in flight are done (Relay::stop, Consumer::stop). Operations are the caller's to
  // refuse from then on.
  void stop();
  // What a drain waits for: cycles whose publishes or marks are out, and records being handled.
  std::uint32_t in_flight() const { return relay_.cycling() + consumer_.held(); }
  const Relay& relay() const { return relay_; }

 private:
  PodId pod_;
  const RelayConfig& config_;
  NodePorts ports_;
  Relay relay_;
  Consumer consumer_;
  std::vector<Record> eager_;  // scratch for the planted bug publish_before_commit
};

}  // namespace relaysim::outbox
