// World: the simulated universe one outbox scenario runs in — the database shards, the log, the
// coordinator, the downstream with its inbox database, the service's pods (each a real
// outbox::Node wired to simulated ports), the business load and the faults. The stores outlive
// every pod.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/outbox/inbox.h"
#include "model/outbox/node.h"
#include "model/outbox/store.h"
#include "sim/kernel/kernel.h"
#include "sim/outbox/downstream.h"
#include "sim/outbox/log.h"
#include "sim/outbox/pod_store.h"
#include "sim/outbox/spec.h"
#include "sim/outbox/truth.h"
#include "sim/world/arrivals.h"
#include "sim/world/coordinator.h"
#include "sim/world/process.h"
#include "sim/world/store_faults.h"

namespace relaysim::sim::outbox {

class World;

// Entities drawn with a Zipf law of exponent `skew` over 1..n (rejection-inversion sampling,
// Hörmann and Derflinger 1996: constant time, no table); skew 0 draws evenly.
class KeySampler {
 public:
  KeySampler(std::uint64_t n, double skew);
  std::uint64_t operator()(Rng& rng) const;
  // The share of draws that pick the hottest entity (entity 1): 1 / sum of k^-skew for k in 1..n,
  // the sum taken as 1 + its integral from 1.5 to n + 0.5 (within a few percent).
  double hottest_share() const;

 private:
  double h(double x) const;
  double h_integral(double x) const;
  double h_integral_inverse(double x) const;
  std::uint64_t n_;
  double s_;
  double h_x1_ = 0, h_n_ = 0, threshold_ = 0;
};

// One pod of the service: its Node while it is up, and the simulated ports the node runs on.
class Pod final : public relaysim::outbox::Log, public relaysim::outbox::Downstream {
 public:
  Pod(World& world, Process& process);

  std::uint32_t partitions() const override;
  relaysim::outbox::ProducerId open_producer() override;
  void produce(relaysim::outbox::ProducerId producer, std::uint32_t partition, std::span<const Record> records,
               std::uint64_t first_sequence, Duration timeout, ProduceCallback done) override;
  relaysim::outbox::MemberId join() override;
  void leave(relaysim::outbox::MemberId member) override;
  void poll(relaysim::outbox::MemberId member, std::uint32_t max_records, Duration wait, PollCallback done) override;
  void commit(relaysim::outbox::MemberId member, std::uint64_t generation, std::uint32_t partition,
              std::uint64_t offset) override;
  void handle(const Record& record, Duration timeout, HandleCallback done) override;

  relaysim::outbox::Node* node() { return node_.get(); }

 private:
  friend class World;
  World& world_;
  Process& process_;
  Rng rng_;
  ProcessCoordinator coordinator_;
  std::vector<std::unique_ptr<PodStore>> stores_;  // per shard: the pod's handle, for store faults
  std::vector<relaysim::outbox::Store*> shards_;   // what the node runs on
  std::unique_ptr<relaysim::outbox::Node> node_;
  bool dying_ = false;  // a crash is destroying the node: its consumer does not leave the group
};

// The events an outbox world emits: the model's, the world's ground truth, the processes'.
struct OutboxBuses {
  relaysim::outbox::Events model;
  WorldEvents world;
  ProcessEvents processes;
};

class World final : private ProcessHost {
 public:
  // `shards`: one store per shard; `dbs`: their SQLite databases (nullptr each for the in-memory
  // store), for crashes in the middle of a write.
  World(const Scenario& scenario, Kernel& kernel, std::span<relaysim::outbox::Store* const> shards,
        std::span<Db* const> dbs, relaysim::outbox::EffectStore& effects, OutboxBuses& buses);
  ~World() override;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  const OutboxSpec& spec() const { return spec_; }
  SimCoordinator& coordinator() { return coordinator_; }
  const SimLog& log() const { return log_; }
  const StoreFaults& store_faults() const { return store_faults_; }

 private:
  friend class Pod;
  void start(Process& p) override;
  void stop(Process& p) override;
  void arrive(std::uint32_t segment);

  const Scenario& scenario_;
  const OutboxSpec& spec_;
  Kernel& kernel_;
  std::vector<relaysim::outbox::Store*> shards_;
  OutboxBuses& buses_;
  SimLog log_;
  SimCoordinator coordinator_;
  SimDownstream downstream_;
  StoreFaults store_faults_;
  Rng rng_;
  std::vector<KeySampler> keys_;  // per load segment
  Arrivals arrivals_;
  Processes processes_;
  std::vector<std::unique_ptr<Pod>> pods_;
  std::vector<std::uint32_t> types_;  // scratch: an operation's message types
};

}  // namespace relaysim::sim::outbox
