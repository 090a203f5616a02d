// World: the simulated universe one scenario runs in — the kernel, ServiceB, the endpoints, the
// platform's pods (each a real webhook model wired to simulated ports), the clients and the
// faults. The Store is the platform's shared database and outlives every pod.
//
// A pod crash destroys the pod's model objects (cache, breaker, dispatcher, in-flight state) and
// bumps its generation; every callback the world owes the dead incarnation is dropped, but what
// it already sent still lands at its endpoint. A restart builds the pod anew from the Store.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/store/store.h"
#include "model/webhook/dispatcher.h"
#include "model/webhook/ingest.h"
#include "model/webhook/url_resolver.h"
#include "sim/kernel/kernel.h"
#include "sim/scenario/scenario.h"
#include "sim/world/endpoints.h"
#include "sim/world/load.h"
#include "sim/world/serviceb.h"
#include "sim/world/truth.h"

namespace relaysim::sim {

class World;

// One pod of the platform: its model objects and the simulated ports they run on.
class Pod final : public Timers, public HttpClient, public UrlDirectory {
 public:
  Pod(World& world, std::uint32_t index);
  ~Pod() override;

  TimerId schedule_at(Time at, TimerCallback cb) override;
  void cancel(TimerId id) override;
  void send(const HttpRequest& request, Duration timeout, HttpCallback done) override;
  void lookup(std::string_view cxid, Duration timeout, LookupCallback done) override;

  void start();
  void crash();
  bool up() const { return runtime_ != nullptr; }
  std::uint32_t index() const { return index_; }
  webhook::Ingest* ingest();
  const webhook::UrlResolver* resolver() const;

 private:
  struct Runtime;
  World& world_;
  std::uint32_t index_;
  std::uint32_t generation_ = 0;
  Rng rng_;
  std::unique_ptr<Runtime> runtime_;
  std::string url_scratch_;
};

class World {
 public:
  World(const Scenario& scenario, webhook::Store& store, Observer& observer);
  ~World();

  // Runs until `limit` (or until nothing is pending). Returns false once the queue ran dry.
  bool run_until(Time limit) { return kernel_.run_until(limit); }

  Kernel& kernel() { return kernel_; }
  const Scenario& scenario() const { return scenario_; }
  webhook::Store& store() { return store_; }
  ServiceB& serviceb() { return serviceb_; }
  const std::vector<std::unique_ptr<Pod>>& pods() const { return pods_; }

 private:
  friend class Pod;
  void route(const ClientKey& key, std::string_view cxid, std::string_view request_id, std::string_view payload);

  Scenario scenario_;
  webhook::Store& store_;
  Observer& observer_;
  Kernel kernel_;
  ServiceB serviceb_;
  Endpoints endpoints_;
  LoadGenerator load_;
  std::vector<std::unique_ptr<Pod>> pods_;
  std::uint32_t next_pod_ = 0;
};

}  // namespace relaysim::sim
