// World: the simulated universe one webhook scenario runs in — ServiceB, the endpoints, the
// platform's pods (each a real webhook Node wired to simulated ports), the clients and the pod
// crashes. The Store is the platform's shared database and outlives every pod.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/webhook/node.h"
#include "model/webhook/store.h"
#include "sim/kernel/kernel.h"
#include "sim/webhook/endpoints.h"
#include "sim/webhook/pod_store.h"
#include "sim/webhook/load.h"
#include "sim/webhook/serviceb.h"
#include "sim/webhook/spec.h"
#include "sim/webhook/truth.h"
#include "sim/world/process.h"
#include "sim/world/store_faults.h"

namespace relaysim::sim::webhook {

class World;

// One pod of the platform: its Node while it is up, and the simulated ports the node runs on.
// The ports answer only the incarnation that asked (Process::at).
class Pod final : public HttpClient, public relaysim::webhook::UrlDirectory {
 public:
  Pod(World& world, Process& process);

  void send(const HttpRequest& request, Duration timeout, HttpCallback done) override;
  void lookup(std::string_view cxid, Duration timeout, relaysim::webhook::LookupCallback done) override;

  relaysim::webhook::Node* node() { return node_.get(); }
  const relaysim::webhook::Node* node() const { return node_.get(); }

 private:
  friend class World;
  World& world_;
  Process& process_;
  Rng rng_;
  std::unique_ptr<PodStore> store_;  // the pod's handle on the shared store
  std::unique_ptr<relaysim::webhook::Node> node_;
  std::string url_scratch_;
};

// The platform's operator, on the tenants' side: every pod's notice channel. It hears each notice
// at once, keeps those of the latest kReplayNoticesKept (requests that failed or were
// dead-lettered) and, at the times the scenario's `replays` say, replays some of them at random
// through a pod that is up — as a tenant who fixed their endpoint would ask. A notice may be
// picked twice, or name a request replayed or forgotten since: the platform must answer each.
class Operator final : public relaysim::webhook::NoticeChannel {
 public:
  explicit Operator(std::uint64_t seed) : rng_(Rng::derive(seed, "replays")) {}
  void tell(const relaysim::webhook::Notice& notice, relaysim::webhook::NoticeCallback done) override;
  // Schedules the batches; `replay` is called once per replay with the id picked.
  template <class Replay>
  void install(Kernel& kernel, const std::vector<ReplayBatch>& batches, Replay replay) {
    for (const ReplayBatch& b : batches) {
      kernel.at(b.at, [this, count = b.count, replay] {
        for (std::uint32_t n = 0; n < count && !notices_.empty(); ++n) replay(notices_[rng_.below(notices_.size())]);
      });
    }
  }

 private:
  Rng rng_;
  std::vector<relaysim::webhook::RequestId> notices_;  // a ring of the latest
  std::size_t next_ = 0;
};

// The events a webhook world emits: the model's, the world's ground truth, the processes'.
struct WebhookBuses {
  relaysim::webhook::Events model;
  WorldEvents world;
  ProcessEvents processes;
};

class World final : private ProcessHost {
 public:
  // `db`: the SQLite store's database (store faults reach into its transactions), or nullptr.
  World(const Scenario& scenario, Kernel& kernel, relaysim::webhook::Store& store, Db* db, WebhookBuses& buses);
  ~World() override;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  const WebhookSpec& spec() const { return spec_; }
  relaysim::webhook::Store& store() { return store_; }
  const ServiceB& serviceb() const { return serviceb_; }
  // The endpoint group (an index into the scenario's) the URL of the cxid named `cxid` points to;
  // nothing for a cxid ServiceB holds no URL for.
  std::optional<std::uint32_t> endpoint_group(std::string_view cxid) const;
  const StoreFaults& store_faults() const { return store_faults_; }
  std::uint32_t pods() const { return processes_.size(); }
  // The breaker state of each pod now (a pod that is down counts as closed: it restarts so).
  std::vector<BreakerState> breakers() const;
  // Dispatch slot-time spent busy by every pod since the start, crashed ones included.
  Duration busy_time() const;
  std::uint32_t pods_up() const;

 private:
  friend class Pod;
  void start(Process& p) override;
  void stop(Process& p) override;
  void route(const ClientKey& key, std::string_view cxid, std::string_view request_id, std::string_view payload);
  void replay(relaysim::webhook::RequestId id);

  const Scenario& scenario_;
  const WebhookSpec& spec_;
  Kernel& kernel_;
  relaysim::webhook::Store& store_;
  WebhookBuses& buses_;
  ServiceB serviceb_;
  Endpoints endpoints_;
  LoadGenerator load_;
  Operator operator_;
  StoreFaults store_faults_;
  Processes processes_;
  std::vector<std::unique_ptr<Pod>> pods_;
  Duration retired_busy_{};  // busy_time() of the pods' crashed incarnations
};

}  // namespace relaysim::sim::webhook
