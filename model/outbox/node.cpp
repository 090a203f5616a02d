#include "model/outbox/node.h"

#include "model/core/assert.h"
#include "model/core/mutants.h"
#include "model/outbox/mutants.h"

namespace relaysim::outbox {

Node::Node(PodId pod, const RelayConfig& config, const NodePorts& ports)
    : pod_(pod), config_(config), ports_(ports), relay_(pod, config, ports), consumer_(pod, config, ports) {}

void Node::start() {
  relay_.start();
  consumer_.start();
}

void Node::stop() {
  relay_.stop();
  consumer_.stop();
}

OperationResult Node::operate(const OperationRequest& request) {
  RELAYSIM_ASSERT(!request.types.empty(), "an operation writes at least one message");
  const Time now = ports_.clock.now();
  OperationResult result;
  const std::uint32_t bucket = bucket_of(request.key, config_.buckets);
  result.shard = shard_of(bucket, config_.shards);
  Store& store = *ports_.shards[result.shard];
  try {
    Operation tx(store, now);
    result.version = tx->write_entity(request.key);
    for (std::uint32_t type : request.types) {
      const RowId id = tx->add(NewMessage{type, request.key, bucket, result.version});
      if (result.first == 0) result.first = id;
    }
    if (planted(mutant::publish_before_commit)) {
      // The planted bug: "publish at once, it saves the leader's scan" -- before the commit.
      eager_.clear();
      for (std::uint32_t i = 0; i < request.types.size(); ++i) {
        eager_.push_back(Record{result.shard, result.first + i, 1, request.types[i], request.key, result.version, 0, now});
      }
      relay_.publish_now(eager_);
    }
    if (request.fails) {
      tx.rollback();
      result.outcome = OperationOutcome::rolled_back;
    } else {
      tx.commit();
    }
  } catch (const StoreError& e) {
    ports_.events.emit(StoreFailed{pod_, result.shard, e.failure(), now});
    result.outcome = OperationOutcome::unavailable;
    return result;
  }
  RELAYSIM_ASSERT(result.first != 0 && result.version >= 1, "an operation wrote its entity and its messages");
  ports_.events.emit(OperationDone{pod_, result.shard, request.key, result.version, result.first, request.types,
                                   result.outcome == OperationOutcome::committed, now});
  return result;
}

}  // namespace relaysim::outbox
