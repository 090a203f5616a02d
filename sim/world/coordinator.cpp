#include "sim/world/coordinator.h"

#include <algorithm>

#include "model/core/assert.h"

namespace relaysim::sim {

const Schema<CoordinatorSpec>& coordinator_schema() {
  static const Schema<CoordinatorSpec> schema = [] {
    Schema<CoordinatorSpec> s(Style::block,
                              "The lease service leaders are elected by (etcd, ZooKeeper): a lease per name, a fencing "
                              "token per grant.");
    s.key("latency", &CoordinatorSpec::latency, latency_codec(), "round-trip latency of a call");
    s.key("slowdowns", &CoordinatorSpec::slowdowns, list_codec(map_codec(slowdown_schema()), "list of windows with a factor"),
          "windows when its latency is multiplied: slow renewals", opt::shown("none"));
    return s;
  }();
  return schema;
}

SimCoordinator::SimCoordinator(const CoordinatorSpec& spec, Kernel& kernel, std::uint64_t seed)
    : spec_(spec), kernel_(kernel), latency_(spec.latency), rng_(Rng::derive(seed, "coordinator")) {}

SimCoordinator::Lease& SimCoordinator::lease(std::string_view name) {
  RELAYSIM_ASSERT(!name.empty(), "a lease has a name");
  for (Lease& l : leases_) {
    if (l.name == name) return l;
  }
  leases_.push_back(Lease{std::string(name), 0, 0, Time{}});
  return leases_.back();
}

void SimCoordinator::acquire(Process& caller, std::string_view name, std::uint64_t holder, Duration ttl,
                             Coordinator::GrantCallback done) {
  RELAYSIM_ASSERT(holder != 0 && ttl > Duration::zero(), "a lease has a holder and a length");
  RELAYSIM_ASSERT(static_cast<bool>(done), "a call has someone to answer");
  const Time now = kernel_.now();
  const Duration round_trip = scale(latency_.sample(rng_), slowdown_at(spec_.slowdowns, now));
  const std::uint32_t slot = requests_.acquire();
  requests_[slot] = Request{&caller, caller.incarnation(), static_cast<std::size_t>(&lease(name) - leases_.data()),
                            holder, ttl, round_trip, std::move(done)};
  kernel_.at(now + round_trip / 2, [this, slot] { arrive(slot); });
}

void SimCoordinator::arrive(std::uint32_t slot) {
  Request& r = requests_[slot];
  RELAYSIM_ASSERT(r.lease < leases_.size() && r.caller != nullptr, "a request names its lease and its caller");
  RELAYSIM_ASSERT(static_cast<bool>(r.done), "a request still has someone to answer");
  Lease& l = leases_[r.lease];
  const Time at = kernel_.now();
  const std::uint64_t holder = r.holder;
  LeaseGrant g;
  if (l.holder == holder && l.expires > at) {
    l.expires = at + r.ttl;
    g = LeaseGrant{true, l.token, l.expires};
    bus_.emit(LeaseGranted{l.name, holder, l.token, true, l.expires, at});
  } else if (l.holder == 0 || l.expires <= at) {
    l.holder = holder;
    l.token = ++revision_;
    l.expires = at + r.ttl;
    RELAYSIM_ASSERT(l.expires > at, "a new grant runs past the moment it is made");
    g = LeaseGrant{true, l.token, l.expires};
    bus_.emit(LeaseGranted{l.name, holder, l.token, false, l.expires, at});
  } else {
    g = LeaseGrant{false, 0, l.expires};
  }
  r.caller->at(r.asked_by, at + r.round_trip - r.round_trip / 2, [g, done = std::move(r.done)]() mutable { done(g); });
  r.done = {};
  requests_.release(slot);
}

void SimCoordinator::release(std::string_view name, std::uint64_t holder) {
  Lease& l = lease(name);
  if (l.holder == holder) l.holder = 0;
}

}  // namespace relaysim::sim
