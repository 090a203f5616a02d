// LeadershipChecker: O-fence. Per shard, the leader writes that take effect carry non-decreasing
// fencing tokens (once a leader has written, no older one does); and a leader counts its lease
// from when it asked, so never past what the coordinator granted it. It also counts the stale
// writes the fence kept out.
//
// Its state (the largest token that wrote, per shard; the latest expiry granted, per token) is
// its own. One event it shares with the MessageChecker, a leader's write; it is attached first,
// so that a write's fencing report comes before those of the messages the write returned.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/core/events.h"
#include "model/outbox/events.h"
#include "model/outbox/types.h"
#include "sim/oracle/ledger.h"
#include "sim/outbox/spec.h"
#include "sim/outbox/violations.h"
#include "sim/world/coordinator.h"

namespace relaysim::sim::outbox {

class LeadershipChecker final : public SinkFor<relaysim::outbox::LeadershipChanged>,
                                public SinkFor<relaysim::outbox::LeaderWrote>,
                                public SinkFor<LeaseGranted> {
 public:
  LeadershipChecker(const OutboxSpec& spec, Ledger& ledger);

  void on(const relaysim::outbox::LeadershipChanged& e) override;
  void on(const relaysim::outbox::LeaderWrote& e) override;
  void on(const LeaseGranted& e) override;

  // Leader writes that did not take effect: the fence kept a stale leader out.
  std::uint64_t stale_writes_kept_out() const { return fenced_out_; }

 private:
  Violations violate_;
  std::vector<relaysim::outbox::FenceToken> fence_;  // per shard: the largest token that wrote
  // Per fencing token: the latest expiry the coordinator granted it. (A map: a real coordinator's
  // tokens are its revisions, which other keys' writes move on too.)
  std::unordered_map<relaysim::outbox::FenceToken, Time> granted_until_;
  std::uint64_t fenced_out_ = 0;
};

}  // namespace relaysim::sim::outbox
