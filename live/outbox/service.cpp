#include "live/outbox/service.h"

#include <boost/asio/post.hpp>

#include "live/serve_file.h"
#include "model/core/assert.h"

namespace relaysim::live::outbox {

namespace {

std::vector<std::unique_ptr<PgStore>> open_shards(const OutboxServeConfig& config) {
  std::vector<std::unique_ptr<PgStore>> stores;
  for (const std::string& conninfo : config.shards) stores.push_back(std::make_unique<PgStore>(conninfo));
  return stores;
}

std::vector<model::Store*> shard_pointers(const std::vector<std::unique_ptr<PgStore>>& stores) {
  std::vector<model::Store*> out;
  for (const auto& s : stores) out.push_back(s.get());
  return out;
}

RedisAddress log_address(const OutboxServeConfig& config) {
  std::string problem;
  const std::optional<RedisAddress> at = redis_address(config.redis, problem);
  RELAYSIM_ASSERT(at.has_value(), "serve.redis was checked when the file was read");
  return *at;
}

}  // namespace

void HttpDownstream::handle(const model::Record& record, Duration timeout, HandleCallback done) {
  if (record.type >= config_.types.size()) {
    boost::asio::post(io_, [done = std::move(done)]() mutable { done(model::Handled::rejected); });  // never inline
    return;
  }
  static constexpr OutgoingHeader kHeaders[] = {{"Content-Type", "application/json"}};
  caller_.call("POST", url_, kHeaders, record_body(record, config_), timeout,
               [done = std::move(done)](HttpReply&& reply) mutable {
                 done(model::classify_handled(reply.error, reply.status));
               });
}

Service::Service(boost::asio::io_context& io, const OutboxServeConfig& config)
    : config_(config),
      timers_(io, clock_),
      rng_(fresh_seed()),
      caller_(io, AddressPolicy{true, true, true}),
      stores_(open_shards(config)),
      shards_(shard_pointers(stores_)),
      coordinator_(caller_, clock_, EtcdOptions{config.etcd, config.lease_prefix}, &grants_),
      log_(io, clock_, log_address(config),
           RedisLogOptions{config.topic, config.partitions, config.max_poll_interval, config.session_timeout}, config.pod,
           &truth_),
      downstream_(io, caller_, config.downstream, config.platform),
      node_(config.pod, config.platform,
            model::NodePorts{clock_, timers_, rng_, coordinator_, log_, downstream_, shards_, events_}),
      api_(node_, config.platform, config.pod),
      drain_wait_(io, clock_) {
  RELAYSIM_ASSERT(config.pod >= 1 && config.pod <= config.platform.pods, "serve.pod is one of platform.pods");
  RELAYSIM_ASSERT(shards_.size() == config.platform.shards, "one database per shard");
  if (!config.events.empty()) {
    event_log_ = std::make_unique<EventLogWriter>(config.events, config.pod, clock_, config.crash_after_commit);
    events_.attach(*event_log_);
    truth_.attach(*event_log_);
    grants_.attach(*event_log_);
  }
  server_ = std::make_unique<HttpServer>(io, listen_endpoint(config.listen, "listen"),
                                         [this](const Incoming& in, Respond respond) { api_.handle(in, std::move(respond)); });
}

Service::~Service() = default;

void Service::start() {
  if (event_log_) event_log_->started(clock_.now());
  node_.start();
}

void Service::stopped() {
  if (event_log_) event_log_->stopped(clock_.now());
}

void Service::drain(std::function<void(std::uint32_t)> done) {
  if (draining_) return;
  draining_ = true;
  api_.set_draining(true);
  server_->stop_accepting();
  node_.stop();
  // The leases' revocations and the group's leave are calls too: done once they are answered.
  drain_wait_.start(
      config_.drain_timeout,
      [this] {
        return node_.in_flight() + coordinator_.calls_in_flight() + static_cast<std::uint32_t>(log_.calls_in_flight());
      },
      std::move(done));
}

}  // namespace relaysim::live::outbox
