// EtcdCoordinator: the Coordinator port (model/core/coordinator.h) on a real etcd (v3), through
// its JSON gateway (`/v3/...` over HTTP, on the HttpCaller of live/http_call.h).
//
// A lease name is a key, the configured prefix followed by the name; its value is the holder.
//   - Asked by a holder that holds no lease of the name here: grant an etcd lease of the ttl
//     rounded up to whole seconds, then, in one transaction, put the key on it if the key does not
//     exist, or else read it. Put: granted, and the fencing token is the put's revision (the key's
//     create revision). etcd's revisions only grow, so a later term's token is larger than every
//     earlier one's. The key exists with this holder's value (a grant whose answer was lost, or
//     another coordinator of the same holder): that lease is the holder's, renewed as below. Else
//     refused, and the unused lease is revoked.
//   - Asked by the holder of the name's lease: one keep-alive of it. Alive: granted under the same
//     token. Gone (it expired, or was revoked): the holder asks afresh, as above, and a grant then
//     carries a new token.
//   - release(): revokes the holder's lease, which deletes the key at once. (Not waited for: an
//     acquire by the same holder right after may reach etcd first and renew the lease being
//     revoked. The outbox relay releases only when it stops for good, Relay::stop, and never
//     asks again after.)
// A call that fails (etcd down or slow past the call's timeout, an answer that is not etcd's) is
// answered refused: a holder that cannot renew steps down when its lease runs out by its own
// clock. `expires` is the moment of the ask plus the ttl — the holder's own measure (the outbox
// relay counts its lease from the ask: model/outbox/relay.cpp). etcd keeps the lease at least that
// long after it granted or renewed it (its TTL is the ttl rounded up, and never below etcd's
// minimum), so a holder always gives a lease up before etcd lets another holder take it.
//
// With `grants`, every grant is told there as it is answered (LeaseGranted, the simulated
// coordinator's own event, whose `expires` is the ask's moment plus the ttl: no later than etcd
// lets the lease go), for the judge's check that a holder never counts a lease past its grant.
//
// Callbacks run on the io_context's loop, never inline, exactly once.
#pragma once

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "live/http_call.h"
#include "model/core/coordinator.h"
#include "model/core/ports.h"
#include "sim/world/coordinator.h"

namespace relaysim::live {

struct EtcdOptions {
  std::string endpoint;               // "http://127.0.0.1:2379"
  std::string prefix = "relaysim/";   // keys are prefix + name
  Duration timeout = std::chrono::seconds(2);  // each HTTP call's, at most
};

class EtcdCoordinator final : public Coordinator {
 public:
  // `caller` must allow the endpoint's address (loopback, a private network) and outlive this.
  EtcdCoordinator(HttpCaller& caller, const Clock& clock, EtcdOptions options, sim::CoordinatorBus* grants = nullptr);
  ~EtcdCoordinator() override;
  EtcdCoordinator(const EtcdCoordinator&) = delete;
  EtcdCoordinator& operator=(const EtcdCoordinator&) = delete;

  void acquire(std::string_view name, std::uint64_t holder, Duration ttl, GrantCallback done) override;
  void release(std::string_view name, std::uint64_t holder) override;

  // Calls made to etcd that failed (no answer, or not the answer etcd gives), since the start.
  std::uint64_t failures() const { return failures_; }
  // Calls to etcd not answered yet (a draining process waits for its leases' revocations).
  std::uint32_t calls_in_flight() const { return in_flight_; }

 private:
  struct Ask;
  struct Held {
    std::int64_t lease = 0;
    std::uint64_t token = 0;
  };
  void grant(std::shared_ptr<Ask> ask);
  void put(std::shared_ptr<Ask> ask, std::int64_t lease);
  void keep_alive(std::shared_ptr<Ask> ask, std::int64_t lease);
  // Answers `ask` granted under `token`, telling `grants_` first.
  void granted(Ask& ask, std::uint64_t token, bool renewed);
  void revoke(std::int64_t lease);
  // POSTs `body` to the gateway's `path`; `then(HttpReply&&)` runs unless this is gone by then.
  template <class F>
  void post(std::string_view path, const std::string& body, F&& then);
  static std::string held_key(std::string_view key, std::uint64_t holder);

  HttpCaller& caller_;
  const Clock& clock_;
  EtcdOptions options_;
  sim::CoordinatorBus* grants_;
  // The leases held here, by key and holder (held_key).
  std::unordered_map<std::string, Held> held_;
  // Cleared when this is destroyed: an answer that comes after is dropped.
  std::shared_ptr<bool> alive_;
  std::uint64_t failures_ = 0;
  std::uint32_t in_flight_ = 0;
};

}  // namespace relaysim::live
