// Coordinator: the port to a lease service with fencing tokens — etcd, ZooKeeper or a Redis lease,
// as the outbox relay elects one leader per shard. The simulator's is sim/world/coordinator.h; the
// live shell's, on a real etcd, live/etcd_coordinator.h (the two are run through one trace by its
// twin check, tests/live/etcd_coordinator_test.cpp).
//
// Promises: at most one holder of a name at a time; every grant carries a fencing token larger
// than any granted before for that name, so a resource that remembers the largest token it has
// seen can refuse a holder whose lease has already passed to someone else.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/core/function.h"
#include "model/core/time.h"

namespace relaysim {

struct LeaseGrant {
  bool granted = false;
  std::uint64_t token = 0;  // the fencing token, when granted
  Time expires{};
};

class Coordinator {
 public:
  virtual ~Coordinator() = default;
  using GrantCallback = InplaceFunction<void(const LeaseGrant&), 48>;
  // Acquires (or, by its holder, renews) the lease `name` for `holder`, for `ttl`.
  virtual void acquire(std::string_view name, std::uint64_t holder, Duration ttl, GrantCallback done) = 0;
  virtual void release(std::string_view name, std::uint64_t holder) = 0;
};

}  // namespace relaysim
