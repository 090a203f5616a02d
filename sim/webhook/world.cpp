#include "sim/webhook/world.h"

#include "model/core/assert.h"

namespace relaysim::sim::webhook {

using namespace relaysim::webhook;

void Operator::tell(const Notice& notice, NoticeCallback done) {
  if (notices_.size() < kReplayNoticesKept) {
    notices_.push_back(notice.request);
  } else {
    RELAYSIM_ASSERT(next_ < notices_.size(), "the ring's next place is in the ring");
    notices_[next_] = notice.request;
    next_ = (next_ + 1) % kReplayNoticesKept;
  }
  done(true);
}

Pod::Pod(World& world, Process& process)
    : world_(world),
      process_(process),
      rng_(Rng::derive(world.scenario_.seed, "pod/" + std::to_string(process.index()))) {}

std::optional<std::uint32_t> World::endpoint_group(std::string_view cxid) const {
  const std::int64_t c = serviceb_.known_index(cxid);
  if (c < 0) return std::nullopt;
  return endpoints_.group_of(serviceb_.endpoint_of(static_cast<std::uint32_t>(c)));
}

void Pod::lookup(std::string_view cxid, Duration timeout, LookupCallback done) {
  RELAYSIM_ASSERT(static_cast<bool>(done), "a lookup has someone to answer");
  Kernel& k = world_.kernel_;
  const std::int64_t c = ServiceB::cxid_index(cxid);
  const auto index = static_cast<std::uint32_t>(c < 0 ? UINT32_MAX : c);
  const ServiceB::Answer a = world_.serviceb_.lookup(index, k.now(), timeout);
  world_.buses_.world.emit(ServiceBCalled{process_.index(), index, k.now(), k.now() + a.latency,
                                          a.status != LookupStatus::error, a.in_outage,
                                          a.status == LookupStatus::found ? a.version : 0});
  process_.after(a.latency, [this, index, status = a.status, version = a.version, done = std::move(done)]() mutable {
    if (status == LookupStatus::found) {
      ServiceB::url_for(index, world_.serviceb_.endpoint_of(index), version, url_scratch_);
    } else {
      url_scratch_.clear();
    }
    done(LookupResult{status, url_scratch_, version});
  });
}

void Pod::send(const HttpRequest& request, Duration timeout, HttpCallback done) {
  RELAYSIM_ASSERT(static_cast<bool>(done), "a send has someone to answer");
  Kernel& k = world_.kernel_;
  const std::string_view webhook_id = request.header(kWebhookIdHeader);
  const RequestId id = request_id_from_webhook_id(webhook_id);
  const std::int64_t ep = ServiceB::endpoint_in(request.url);
  SendFate fate;
  HttpResult result;
  if (ep < 0 || ep >= world_.endpoints_.count()) {
    fate.client_error = NetError::dns_error;
    fate.result_at = k.now() + std::chrono::milliseconds(5);
  } else {
    fate = world_.endpoints_.send(static_cast<std::uint32_t>(ep), k.now(), timeout, result.retry_after);
  }
  world_.buses_.world.emit(HttpSent{process_.index(), id, fate, k.now(), request.url, webhook_id,
                                    LoadGenerator::key_in(request.payload), hash_bytes(request.payload)});
  result.error = fate.client_error;
  if (result.error == NetError::none) {
    result.status = fate.status;
  } else {
    result.retry_after = Duration{-1};
  }
  process_.at(fate.result_at, [result, done = std::move(done)]() mutable { done(result); });
}

World::World(const Scenario& scenario, Kernel& kernel, Store& store, Db* db, WebhookBuses& buses)
    : scenario_(scenario),
      spec_(spec_of(scenario)),
      kernel_(kernel),
      store_(store),
      buses_(buses),
      serviceb_(spec_.serviceb, spec_.cxid_count(), spec_.endpoint_count(), scenario.seed),
      endpoints_(spec_.endpoints, scenario.seed),
      load_(spec_.load, spec_.cxid_count(), scenario.seed,
            [this](const ClientKey& key, std::string_view cxid, std::string_view request_id,
                   std::string_view payload) { route(key, cxid, request_id, payload); }),
      operator_(scenario.seed),
      store_faults_(scenario),
      processes_(kernel, spec_.platform.pods, *this, buses.processes) {
  for (std::uint32_t i = 0; i < processes_.size(); ++i) {
    pods_.push_back(std::make_unique<Pod>(*this, processes_[i]));
    pods_.back()->store_ = std::make_unique<PodStore>(store, db, store_faults_, kernel, processes_, i);
  }
  // Pods start first: events at equal times run in scheduling order, and a client call at time
  // zero must find them up.
  processes_.start_all();
  serviceb_.install(kernel_);
  load_.install(kernel_);
  if (!spec_.replays.empty()) operator_.install(kernel_, spec_.replays, [this](RequestId id) { replay(id); });
  processes_.install(scenario.crashes);
  processes_.install(scenario.pauses);
}

World::~World() = default;

void World::start(Process& p) {
  RELAYSIM_ASSERT(p.index() < pods_.size(), "a pod the world built");
  Pod& pod = *pods_[p.index()];
  RELAYSIM_ASSERT(!pod.node_, "starting a pod that is up");
  RELAYSIM_ASSERT(pod.store_ != nullptr, "a pod has its handle on the store");
  pod.store_->restart();
  // Without store faults the pod talks to the store directly: the facade costs a call per call.
  Store& store = store_faults_.any() ? static_cast<Store&>(*pod.store_) : store_;
  pod.node_ = std::make_unique<Node>(p.index(), spec_.platform, NodePorts{kernel_, p, pod.rng_, pod, pod, store, buses_.model, operator_});
  pod.node_->start();
}

void World::stop(Process& p) {
  RELAYSIM_ASSERT(p.index() < pods_.size(), "a pod the world built");
  auto& node = pods_[p.index()]->node_;
  RELAYSIM_ASSERT(node != nullptr, "stopping a pod that is up");
  retired_busy_ += node->dispatcher().busy_time();
  node.reset();
}

Duration World::busy_time() const {
  Duration sum = retired_busy_;
  for (const auto& pod : pods_) sum += pod->node_ ? pod->node_->dispatcher().busy_time() : Duration{};
  return sum;
}

std::uint32_t World::pods_up() const {
  std::uint32_t n = 0;
  for (const auto& pod : pods_) n += pod->node_ ? 1 : 0;
  return n;
}

std::vector<BreakerState> World::breakers() const {
  std::vector<BreakerState> out;
  for (const auto& pod : pods_) out.push_back(pod->node_ ? pod->node_->resolver().breaker().state() : BreakerState::closed);
  return out;
}

void World::route(const ClientKey& key, std::string_view cxid, std::string_view request_id, std::string_view payload) {
  // A load balancer in front of the pods: round robin over the ones that are up and not paused.
  Process* p = processes_.next_awake();
  if (p == nullptr) {
    buses_.world.emit(ClientRejected{kernel_.now()});
    return;
  }
  RELAYSIM_ASSERT(pods_[p->index()]->node_ != nullptr, "the load balancer picks a pod that is up");
  buses_.world.emit(ClientCalling{key, kernel_.now()});
  const IngestResult r = pods_[p->index()]->node_->ingest().create(cxid, request_id, payload);
  buses_.world.emit(ClientCreated{key, r, kernel_.now()});
}

void World::replay(RequestId id) {
  // Through the same load balancer as the clients; with no pod up the operator's call fails.
  Process* p = processes_.next_awake();
  if (p == nullptr) return;
  RELAYSIM_ASSERT(pods_[p->index()]->node_ != nullptr, "the load balancer picks a pod that is up");
  pods_[p->index()]->node_->ingest().replay(id);
}

}  // namespace relaysim::sim::webhook
