#include "sim/outbox/world.h"

#include <cmath>

#include "model/core/assert.h"

namespace relaysim::sim::outbox {

using namespace relaysim::outbox;

namespace {

// log1p(x) / x and expm1(x) / x, exact near 0.
double log1p_over(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x)); }
double expm1_over(double x) { return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x)); }

std::vector<StoreFault> faults_of_shard(const OutboxSpec& spec, ShardId shard) {
  std::vector<StoreFault> out;
  for (const ShardFault& f : spec.shard_faults) {
    if (f.shard == shard) out.push_back(StoreFault{f.window, f.failure});
  }
  return out;
}

}  // namespace

KeySampler::KeySampler(std::uint64_t n, double skew) : n_(n), s_(skew) {
  RELAYSIM_ASSERT(n >= 1, "at least one entity");
  if (s_ <= 0) return;
  h_x1_ = h_integral(1.5) - 1.0;
  h_n_ = h_integral(static_cast<double>(n_) + 0.5);
  threshold_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
}

double KeySampler::hottest_share() const {
  if (s_ <= 0) return 1.0 / static_cast<double>(n_);
  if (n_ == 1) return 1.0;
  const double share = 1.0 / (1.0 + h_n_ - h_integral(1.5));
  RELAYSIM_ASSERT(share > 0 && share <= 1, "a share of the draws");
  return share;
}

double KeySampler::h(double x) const { return std::exp(-s_ * std::log(x)); }

double KeySampler::h_integral(double x) const {
  const double lx = std::log(x);
  return expm1_over((1.0 - s_) * lx) * lx;
}

double KeySampler::h_integral_inverse(double x) const {
  double t = x * (1.0 - s_);
  if (t < -1.0) t = -1.0;
  return std::exp(log1p_over(t) * x);
}

std::uint64_t KeySampler::operator()(Rng& rng) const {
  if (s_ <= 0) return 1 + rng.below(n_);
  for (;;) {
    const double u = h_n_ + rng.uniform01() * (h_x1_ - h_n_);
    const double x = h_integral_inverse(u);
    double k = std::floor(x + 0.5);
    if (k < 1) k = 1;
    if (k > static_cast<double>(n_)) k = static_cast<double>(n_);
    if (k - x <= threshold_ || u >= h_integral(k + 0.5) - h(k)) return static_cast<std::uint64_t>(k);
  }
}

Pod::Pod(World& world, Process& process)
    : world_(world),
      process_(process),
      rng_(Rng::derive(world.scenario_.seed, "pod/" + std::to_string(process.index()))),
      coordinator_(world.coordinator_, process) {}

std::uint32_t Pod::partitions() const { return world_.log_.partitions(); }
ProducerId Pod::open_producer() { return world_.log_.open_producer(); }

void Pod::produce(ProducerId producer, std::uint32_t partition, std::span<const Record> records,
                  std::uint64_t first_sequence, Duration timeout, ProduceCallback done) {
  world_.log_.produce(process_, producer, partition, records, first_sequence, timeout, std::move(done));
}

MemberId Pod::join() { return world_.log_.join(process_.index() + 1); }

void Pod::leave(MemberId member) {
  // A crash does not leave the group politely: the group finds out when the session runs out.
  if (dying_) {
    world_.log_.lost(member);
  } else {
    world_.log_.leave(member);
  }
}

void Pod::poll(MemberId member, std::uint32_t max_records, Duration wait, PollCallback done) {
  world_.log_.poll(process_, member, max_records, wait, std::move(done));
}

void Pod::commit(MemberId member, std::uint64_t generation, std::uint32_t partition, std::uint64_t offset) {
  world_.log_.commit(member, generation, partition, offset);
}

void Pod::handle(const Record& record, Duration timeout, HandleCallback done) {
  world_.downstream_.handle(process_, process_.index() + 1, record, timeout, std::move(done));
}

World::World(const Scenario& scenario, Kernel& kernel, std::span<Store* const> shards, std::span<Db* const> dbs,
             EffectStore& effects, OutboxBuses& buses)
    : scenario_(scenario),
      spec_(spec_of(scenario)),
      kernel_(kernel),
      shards_(shards.begin(), shards.end()),
      buses_(buses),
      log_(spec_.log, kernel, scenario.seed, buses.world),
      coordinator_(spec_.coordinator, kernel, scenario.seed),
      downstream_(spec_.downstream, kernel, scenario.seed, effects, buses.world),
      store_faults_(scenario),
      rng_(Rng::derive(scenario.seed, "business")),
      arrivals_([&] {
        std::vector<ArrivalSpec> a;
        for (const LoadSegment& l : spec_.load) a.push_back(l.arrivals);
        return a;
      }(), rng_, [this](std::uint32_t segment) { arrive(segment); }),
      processes_(kernel, spec_.platform.pods, *this, buses.processes) {
  RELAYSIM_ASSERT(shards.size() == spec_.platform.shards && dbs.size() == shards.size(), "a store per shard");
  for (const LoadSegment& l : spec_.load) keys_.emplace_back(l.keys, l.skew);
  for (std::uint32_t i = 0; i < processes_.size(); ++i) {
    pods_.push_back(std::make_unique<Pod>(*this, processes_[i]));
    Pod& pod = *pods_.back();
    for (ShardId s = 0; s < shards.size(); ++s) {
      pod.stores_.push_back(std::make_unique<PodStore>(*shards[s], dbs[s], store_faults_, kernel, processes_, i,
                                                       faults_of_shard(spec_, s)));
    }
  }
  // Pods start first: events at equal times run in scheduling order, and an operation at time zero
  // must find them up.
  processes_.start_all();
  arrivals_.install(kernel_);
  processes_.install(scenario.crashes);
  processes_.install(scenario.pauses);
}

World::~World() = default;

void World::start(Process& p) {
  RELAYSIM_ASSERT(p.index() < pods_.size(), "a pod the world built");
  Pod& pod = *pods_[p.index()];
  RELAYSIM_ASSERT(!pod.node_, "starting a pod that is up");
  RELAYSIM_ASSERT(pod.stores_.size() == shards_.size(), "a pod has a handle on every shard");
  pod.shards_.clear();
  const bool faults = store_faults_.any() || !spec_.shard_faults.empty();
  for (ShardId s = 0; s < shards_.size(); ++s) {
    pod.stores_[s]->restart();
    // Without faults the pod talks to the stores directly: the facade costs a call per call.
    pod.shards_.push_back(faults ? static_cast<Store*>(pod.stores_[s].get()) : shards_[s]);
  }
  pod.node_ = std::make_unique<Node>(p.index() + 1, spec_.platform,
                                     NodePorts{kernel_, p, pod.rng_, pod.coordinator_, pod, pod, pod.shards_, buses_.model});
  pod.node_->start();
}

void World::stop(Process& p) {
  RELAYSIM_ASSERT(p.index() < pods_.size(), "a pod the world built");
  Pod& pod = *pods_[p.index()];
  RELAYSIM_ASSERT(pod.node_ != nullptr, "stopping a pod that is up");
  pod.dying_ = true;
  pod.node_.reset();
  pod.dying_ = false;
}

void World::arrive(std::uint32_t segment) {
  RELAYSIM_ASSERT(segment < spec_.load.size() && segment < keys_.size(), "a segment of the load");
  const LoadSegment& l = spec_.load[segment];
  const EntityKey key = keys_[segment](rng_);
  const bool fails = rng_.chance(l.rollbacks);
  Process* p = processes_.next_awake();
  if (p == nullptr) {
    buses_.world.emit(OperationCalled{UINT32_MAX, key, 255, kernel_.now()});
    return;
  }
  RELAYSIM_ASSERT(pods_[p->index()]->node_ != nullptr, "the load balancer picks a pod that is up");
  types_.assign(l.messages, l.type);
  const OperationResult r = pods_[p->index()]->node_->operate(OperationRequest{key, types_, fails});
  buses_.world.emit(OperationCalled{p->index() + 1, key, static_cast<std::uint8_t>(r.outcome), kernel_.now()});
}

}  // namespace relaysim::sim::outbox
