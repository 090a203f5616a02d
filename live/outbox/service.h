// Service: `relaysim serve` for a `system: outbox` configuration — one pod of the service that
// owns the outbox, live. It is the model's Node (model/outbox/node.h: the business operation, the
// relay's leaders per shard, the rescuer, the consumer with its re-lock) wired to real parts: a
// PostgreSQL database per shard (PgStore), leases in etcd (EtcdCoordinator), the partitioned log
// on Redis streams (RedisLog), the downstream over HTTP, and the steady clock and timers. No
// policy lives here: what a grant, a fence, a poll or an answer means is the model's.
//
// The store's calls are synchronous (libpq's blocking API, as the model's Store port is), so a
// slow database holds this process's loop for the length of the call: give each shard's
// connection string a connect_timeout, and PostgreSQL a statement_timeout, to bound it.
//
// Several processes (pods) serve one configuration, each with its own serve.pod: the shards'
// leases spread over them, and the consumer group's partitions too.
#pragma once

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "live/clock.h"
#include "live/etcd_coordinator.h"
#include "live/http_call.h"
#include "live/http_server.h"
#include "live/outbox/api.h"
#include "live/outbox/config.h"
#include "live/outbox/event_log.h"
#include "live/outbox/pg_store.h"
#include "live/outbox/redis_log.h"
#include "live/shutdown.h"
#include "model/core/random.h"
#include "model/outbox/node.h"

namespace relaysim::live::outbox {

// The downstream a consumer hands a record to: POST serve.downstream with record_body, the answer
// read by model/outbox/ports.h's classify_handled. A record of a type the platform does not have
// (the log holds records of an older configuration, or of another sharing the topic) has no body
// to send: it is rejected, as a downstream rejects what it cannot apply.
class HttpDownstream final : public model::Downstream {
 public:
  HttpDownstream(boost::asio::io_context& io, HttpCaller& caller, std::string url, const model::RelayConfig& config)
      : io_(io), caller_(caller), url_(std::move(url)), config_(config) {}
  void handle(const model::Record& record, Duration timeout, HandleCallback done) override;

 private:
  boost::asio::io_context& io_;
  HttpCaller& caller_;
  std::string url_;
  const model::RelayConfig& config_;
};

class Service {
 public:
  // Connects to every shard's database (creating its schema when absent) and binds the listening
  // address. Throws StoreError or boost::system::system_error, whose messages say what failed.
  Service(boost::asio::io_context& io, const OutboxServeConfig& config);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  unsigned short port() const { return server_->port(); }
  // Campaigns for the shards' leases and joins the consumer group.
  void start();
  // Stops taking operations; gives the leases back and leaves the group once the records in
  // flight are done (Node::stop), then calls `done` — or when drain_timeout has passed.
  void drain(std::function<void(std::uint32_t unfinished)> done);
  // Logs the end of the process (when it logs events): after drain, before it exits.
  void stopped();

 private:
  const OutboxServeConfig& config_;
  LiveClock clock_;
  AsioTimers timers_;
  Rng rng_;
  // The operator's own addresses (etcd, the downstream): not behind the address guard.
  HttpCaller caller_;
  std::vector<std::unique_ptr<PgStore>> stores_;
  std::vector<model::Store*> shards_;
  // etcd's grants of the shards' leases, as its answers tell them: for the event log.
  sim::CoordinatorBus grants_;
  EtcdCoordinator coordinator_;
  // What Redis's script says it wrote (each record appended, or a repeat) and which commits it
  // took: for the event log.
  sim::outbox::WorldEvents truth_;
  RedisLog log_;
  HttpDownstream downstream_;
  model::Events events_;
  std::unique_ptr<EventLogWriter> event_log_;  // with serve --events
  model::Node node_;
  Api api_;
  std::unique_ptr<HttpServer> server_;
  DrainWait drain_wait_;
  bool draining_ = false;
};

}  // namespace relaysim::live::outbox
