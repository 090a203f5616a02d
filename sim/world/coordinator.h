// SimCoordinator: the simulated lease service (etcd, ZooKeeper, a Redis lease) behind the
// Coordinator port (model/core/coordinator.h), for every system that elects a leader.
//
// A call travels half its latency to the service, is decided there at the service's own time,
// and its answer travels the other half back (to the caller's process: dropped if it died,
// waiting if it is paused). A lease that is free or expired is granted under a fencing token one
// higher than any granted before (etcd's revision); its holder's renewal before it expires
// extends it under the same token; anyone else is refused until it expires. The service never
// grants two holders at once — but a holder learns of the expiry only from its own clock, which
// a pause stops: the double leader the fencing token exists for.
//
// What can go wrong, from the scenario: slow windows multiply the latency (a slow renewal can
// come back after the lease it renews has expired).
//
// Ground truth: every grant is a LeaseGranted event on the service's bus.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/coordinator.h"
#include "model/core/events.h"
#include "model/core/random.h"
#include "model/core/slot_pool.h"
#include "sim/kernel/kernel.h"
#include "sim/scenario/schema.h"
#include "sim/world/distribution.h"
#include "sim/world/process.h"

namespace relaysim::sim {

struct CoordinatorSpec {
  LatencySpec latency{std::chrono::milliseconds(2), std::chrono::milliseconds(10)};
  std::vector<Slowdown> slowdowns;
  bool operator==(const CoordinatorSpec&) const = default;
};
const Schema<CoordinatorSpec>& coordinator_schema();

// A lease granted (renewed: its holder extended it under the same token).
struct LeaseGranted {
  std::string_view name;
  std::uint64_t holder;
  std::uint64_t token;
  bool renewed;
  Time expires;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(hash_bytes(name));
    fp.mix(holder << 1 ^ (renewed ? 1U : 0U));
    fp.mix(token);
    fp.mix(at);
  }
};
using CoordinatorBus = EventBus<LeaseGranted>;

class SimCoordinator {
 public:
  SimCoordinator(const CoordinatorSpec& spec, Kernel& kernel, std::uint64_t seed);
  SimCoordinator(const SimCoordinator&) = delete;
  SimCoordinator& operator=(const SimCoordinator&) = delete;

  CoordinatorBus& bus() { return bus_; }
  void acquire(Process& caller, std::string_view name, std::uint64_t holder, Duration ttl, Coordinator::GrantCallback done);
  void release(std::string_view name, std::uint64_t holder);
  std::uint64_t grants() const { return revision_; }

 private:
  struct Lease {
    std::string name;
    std::uint64_t holder = 0;
    std::uint64_t token = 0;
    Time expires{};
  };
  Lease& lease(std::string_view name);
  // A call on its way: decided when it arrives, answered to the incarnation that made it.
  struct Request {
    Process* caller = nullptr;
    std::uint64_t asked_by = 0;
    std::size_t lease = 0;
    std::uint64_t holder = 0;
    Duration ttl{};
    Duration round_trip{};
    Coordinator::GrantCallback done;
  };
  void arrive(std::uint32_t slot);

  CoordinatorSpec spec_;
  Kernel& kernel_;
  Latency latency_;
  Rng rng_;
  CoordinatorBus bus_;
  std::vector<Lease> leases_;  // few: one per shard
  SlotPool<Request> requests_;
  std::uint64_t revision_ = 0;
};

// A process's handle on the coordinator: the Coordinator port its model runs on.
class ProcessCoordinator final : public Coordinator {
 public:
  ProcessCoordinator(SimCoordinator& service, Process& process) : service_(service), process_(process) {}
  void acquire(std::string_view name, std::uint64_t holder, Duration ttl, GrantCallback done) override {
    service_.acquire(process_, name, holder, ttl, std::move(done));
  }
  void release(std::string_view name, std::uint64_t holder) override { service_.release(name, holder); }

 private:
  SimCoordinator& service_;
  Process& process_;
};

}  // namespace relaysim::sim
