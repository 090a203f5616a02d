// Relay: one pod's part in moving messages from the outbox to the log — for every shard, it
// campaigns for the shard's lease and, while it leads, scans the shard for due pending messages,
// publishes a record for each and marks them processing, and rescues messages whose processing
// timed out.
//
// Leadership (Coordinator port): a lease per shard, renewed every renew_every; a grant carries a
// fencing token larger than any before it. The new leader first writes its token into the shard
// (Store::fence), and every later write of its carries it, so a leader that was paused past its
// lease — and still believes it leads until its own timer tells it otherwise — changes nothing
// once its successor has written. A pod that learns it no longer leads (renewal refused, its
// lease's end passed, a write fenced out) stops scanning; it campaigns again every renew_every.
// A pod campaigns at once for its preferred shards (shard % pods == pod - 1) and half a renewal
// later for the others, so leadership spreads over the pods and moves when one dies.
//
// The publish order (RelayConfig::order), and what each risks:
//  publish_then_mark (the seed's) — scan, publish, then mark what was published. A leader that
//    dies between the publish and the mark leaves its messages pending: the next leader publishes
//    them again, so the log holds duplicate records (the consumers' re-lock and the inbox make
//    them harmless). A consumer may receive a record before its mark commits: it waits for it
//    (relock_wait).
//  mark_then_publish — scan and mark in one transaction, then publish. Nothing is published twice
//    by a dying leader, but a message marked and never published (the leader died, the publish
//    failed) stays processing until the rescuer returns it: latency instead of duplicates.
// Each term of each shard publishes in a producer session of its own, with at most one produce
// per partition in flight (a cycle waits for all of its publishes): like a Kafka producer with a
// transactional id per shard, re-initialised (fenced) by each new leader. A timed-out publish is
// repeated in the same session (publish_retries), so the log writes it once however often it is
// repeated; a publish still unanswered after that counts as
// failed (under publish_then_mark the message stays pending and is published again — a duplicate
// record when the first one was written after all).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/core/coordinator.h"
#include "model/core/ports.h"
#include "model/core/random.h"
#include "model/outbox/config.h"
#include "model/outbox/events.h"
#include "model/outbox/ports.h"
#include "model/outbox/store.h"

namespace relaysim::outbox {

// What a pod's relay and consumer run on. Every reference must outlive them.
struct NodePorts {
  Clock& clock;
  Timers& timers;
  Rng& rng;
  Coordinator& coordinator;
  Log& log;
  Downstream& downstream;
  std::span<Store* const> shards;  // one per shard, in shard order
  Events& events;
};

class Relay {
 public:
  Relay(PodId pod, const RelayConfig& config, const NodePorts& ports);
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  void start();
  // Stops for good (a draining pod): steps down from every shard and gives its leases back, so
  // others lead at once rather than when the leases would have run out. A cycle in flight
  // finishes (its marks are fenced out if a successor has written); nothing new starts.
  void stop();
  // Shards whose cycle is in flight: publishes out, or their marks not yet written.
  std::uint32_t cycling() const;
  // Publishes `records` at once, outside any leadership (only the planted bug
  // publish_before_commit does this, from inside a business transaction).
  void publish_now(std::span<const Record> records);
  bool leads(ShardId shard) const { return shards_[shard].leading; }

 private:
  struct Group {  // one produce of a cycle: the records of one partition
    std::uint32_t partition = 0;
    std::uint32_t begin = 0, end = 0;  // into records_
    ProducerId producer = 0;  // the session it was sent in, and is repeated in
    std::uint64_t first_sequence = 0;
    std::uint32_t tries = 0;
    Produced outcome = Produced::timeout;
  };
  struct Shard {
    ShardId id = 0;
    bool leading = false;
    FenceToken token = 0;
    Time lease_until{};
    TimerId renew, lease_end, scan, rescue;
    bool cycling = false;         // a scan's publishes are out
    bool full = false;            // the cycle's scan came back full: scan again at once
    Time store_retry_at{};
    std::vector<Message> batch;   // the cycle's messages
    std::vector<Record> records;  // their records, grouped by partition
    std::vector<std::uint32_t> of_record;  // records[i] is batch[of_record[i]]
    std::vector<Group> groups;
    std::uint32_t outstanding = 0;  // groups not answered
    std::vector<Message> scratch;
    ProducerId producer = 0;                   // this term's session; 0: none opened yet
    std::vector<std::uint64_t> next_sequence;  // by partition, in `producer`'s session
  };

  void campaign(ShardId s);
  void granted(ShardId s, Time asked_at, const LeaseGrant& g);
  void step_down(ShardId s);
  void schedule_scan(ShardId s, Time at);
  void cycle(ShardId s);
  void publish(ShardId s, std::uint32_t group);
  void published(ShardId s, std::uint32_t group, Produced outcome);
  void cycle_done(ShardId s);
  void rescue(ShardId s);
  // The shard's producer session for this term, opened on first use.
  ProducerId producer(ShardId s);
  // A store call failed: leave the shard alone for store_retry.
  void store_failed(ShardId s, const StoreError& e);
  Store& store(ShardId s) { return *ports_.shards[s]; }

  PodId pod_;
  bool stopped_ = false;
  // Who this relay is to the coordinator: its pod and a number drawn when it starts, so a pod that
  // restarts within its old lease is a new holder and gets a new token (an etcd client's new lease
  // ID), never the dead incarnation's term.
  std::uint64_t holder_;
  const RelayConfig& config_;
  NodePorts ports_;
  std::vector<Shard> shards_;
  std::vector<std::uint16_t> max_attempts_;  // by type
  std::vector<Message> marked_;
  std::vector<std::uint32_t> partition_;  // scratch: a cycle's messages' partitions
};

}  // namespace relaysim::outbox
