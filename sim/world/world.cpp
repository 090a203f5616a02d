#include "sim/world/world.h"

#include "model/core/assert.h"

namespace relaysim::sim {

using namespace relaysim::webhook;

struct Pod::Runtime {
  Runtime(Pod& pod, World& world)
      : resolver(pod.index_,
                 ResolverConfig{world.scenario_.platform.url_cache_ttl, world.scenario_.platform.url_cache_max_entries,
                                world.scenario_.platform.lookup_timeout, world.scenario_.platform.serviceb_breaker},
                 pod, world.kernel_, world.observer_),
        dispatcher(pod.index_, world.scenario_.platform, world.store_, world.kernel_, pod, pod.rng_, resolver, pod,
                   world.observer_),
        ingest(pod.index_, world.scenario_.platform, world.store_, world.kernel_, world.observer_,
               [d = &dispatcher] { d->nudge(); }) {}
  UrlResolver resolver;
  Dispatcher dispatcher;
  Ingest ingest;
};

Pod::Pod(World& world, std::uint32_t index)
    : world_(world), index_(index), rng_(Rng::derive(world.scenario_.seed, "pod/" + std::to_string(index))) {}

Pod::~Pod() = default;

Ingest* Pod::ingest() { return runtime_ ? &runtime_->ingest : nullptr; }
const UrlResolver* Pod::resolver() const { return runtime_ ? &runtime_->resolver : nullptr; }

void Pod::start() {
  RELAYSIM_ASSERT(!runtime_, "starting a pod that is up");
  runtime_ = std::make_unique<Runtime>(*this, world_);
  world_.observer_.pod_started(index_, world_.kernel_.now());
  runtime_->dispatcher.start();
}

void Pod::crash() {
  if (!runtime_) return;
  ++generation_;  // every callback owed to this incarnation is now dropped
  runtime_.reset();
  world_.observer_.pod_crashed(index_, world_.kernel_.now());
}

TimerId Pod::schedule_at(Time at, TimerCallback cb) {
  Kernel& k = world_.kernel_;
  const EventId id = k.at(std::max(at, k.now()), [this, gen = generation_, cb = std::move(cb)]() mutable {
    if (gen == generation_) cb();
  });
  return TimerId{id.value};
}

void Pod::cancel(TimerId id) { world_.kernel_.cancel(EventId{id.value}); }

void Pod::lookup(std::string_view cxid, Duration timeout, LookupCallback done) {
  Kernel& k = world_.kernel_;
  const std::int64_t c = ServiceB::cxid_index(cxid);
  const auto index = static_cast<std::uint32_t>(c < 0 ? UINT32_MAX : c);
  const ServiceB::Answer a = world_.serviceb_.lookup(index, k.now(), timeout);
  world_.observer_.serviceb_called(index_, index, k.now(), k.now() + a.latency, a.status != LookupStatus::error,
                                   a.in_outage);
  k.after(a.latency, [this, gen = generation_, index, status = a.status, version = a.version,
                      done = std::move(done)]() mutable {
    if (gen != generation_) return;
    if (status == LookupStatus::found) {
      ServiceB::url_for(index, world_.serviceb_.endpoint_of(index), version, url_scratch_);
    } else {
      url_scratch_.clear();
    }
    done(LookupResult{status, url_scratch_, version});
  });
}

void Pod::send(const HttpRequest& request, Duration timeout, HttpCallback done) {
  Kernel& k = world_.kernel_;
  const RequestId id = request_id_from_webhook_id(request.webhook_id);
  const std::int64_t ep = ServiceB::endpoint_in(request.url);
  SendFate fate;
  HttpResult result;
  if (ep < 0 || ep >= world_.endpoints_.count()) {
    fate.client_error = NetError::dns_error;
    fate.result_at = k.now() + std::chrono::milliseconds(5);
  } else {
    fate = world_.endpoints_.send(static_cast<std::uint32_t>(ep), k.now(), timeout, result.retry_after);
  }
  world_.observer_.http_sent(index_, id, fate, k.now());
  result.error = fate.client_error;
  if (result.error == NetError::none) {
    result.status = fate.status;
  } else {
    result.retry_after = Duration{-1};
  }
  k.at(fate.result_at, [this, gen = generation_, result, done = std::move(done)]() mutable {
    if (gen == generation_) done(result);
  });
}

World::World(const Scenario& scenario, Store& store, Observer& observer)
    : scenario_(scenario),
      store_(store),
      observer_(observer),
      serviceb_(scenario.serviceb, scenario.cxids != 0 ? scenario.cxids : scenario.endpoint_count(),
                scenario.endpoint_count(), scenario.seed),
      endpoints_(scenario.endpoints, scenario.seed),
      load_(scenario.load, scenario.cxids != 0 ? scenario.cxids : scenario.endpoint_count(), scenario.seed,
            [this](const ClientKey& key, std::string_view cxid, std::string_view request_id,
                   std::string_view payload) { route(key, cxid, request_id, payload); }) {
  for (std::uint32_t i = 0; i < scenario.platform.pods; ++i) pods_.push_back(std::make_unique<Pod>(*this, i));
  // Pods start first: events at equal times run in scheduling order, and a client call at time
  // zero must find them up.
  kernel_.at(Time{}, [this] {
    for (auto& pod : pods_) pod->start();
  });
  serviceb_.install(kernel_);
  load_.install(kernel_);
  for (const CrashFault& f : scenario.crashes) {
    RELAYSIM_ASSERT(f.pod < pods_.size(), "the loader checks crash targets");
    kernel_.at(f.at, [this, f] {
      Pod& pod = *pods_[f.pod];
      if (!pod.up()) return;
      pod.crash();
      if (f.restart_after < kForever) kernel_.after(f.restart_after, [&pod] {
        if (!pod.up()) pod.start();
      });
    });
  }
}

World::~World() = default;

void World::route(const ClientKey& key, std::string_view cxid, std::string_view request_id,
                  std::string_view payload) {
  // A load balancer in front of the pods: round robin over the ones that are up.
  for (std::size_t tried = 0; tried < pods_.size(); ++tried) {
    Pod& pod = *pods_[next_pod_];
    next_pod_ = (next_pod_ + 1) % static_cast<std::uint32_t>(pods_.size());
    if (!pod.up()) continue;
    const IngestResult r = pod.ingest()->create(cxid, request_id, payload);
    observer_.client_created(key, r, kernel_.now());
    return;
  }
  observer_.client_rejected(kernel_.now());
}

}  // namespace relaysim::sim
