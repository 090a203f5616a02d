#include "live/sms/service.h"

#include <iostream>

#include "live/redis_kv.h"
#include "live/sms/directory.h"
#include "live/serve_file.h"
#include "model/core/assert.h"

namespace relaysim::live::sms {

namespace {

std::unique_ptr<KeyValue> key_value(boost::asio::io_context& io, const SmsServeConfig& config) {
  if (config.redis.empty()) return std::make_unique<NoKeyValue>(io);
  std::string problem;
  const std::optional<RedisAddress> at = redis_address(config.redis, problem);
  RELAYSIM_ASSERT(at.has_value(), "serve.redis was checked when the file was read");
  return std::make_unique<RedisKeyValue>(io, *at);
}

}  // namespace

Service::Service(boost::asio::io_context& io, const SmsServeConfig& config)
    : config_(config),
      timers_(io, clock_),
      rng_(fresh_seed()),
      // The providers are the operator's own choice: no address guard.
      caller_(io, AddressPolicy{true, true, true}, {}, config.keep_alive),
      providers_(caller_, config.providers),
      kv_(key_value(io, config)),
      directory_(config.directory.empty() ? std::unique_ptr<model::Directory>(std::make_unique<EmptyDirectory>())
                                          : std::make_unique<SqliteDirectory>(config.directory)),
      codec_(config.token_secret),
      store_(config.database, config.durability),
      keys_(store_.db()),
      office_(store_, codec_, clock_, config.platform.token_lifetime, config.platform.quota_period),
      node_(config.pod, config.platform, {},
            model::NodePorts{clock_, timers_, rng_, providers_, *kv_, *directory_, codec_, store_, events_}, config.business),
      api_(node_, office_, store_, keys_, codec_, clock_, config.providers),
      poller_(io),
      drain_wait_(io, clock_) {
  RELAYSIM_ASSERT(config.pod >= 1, "live pods are numbered from 1");
  events_.attach(limit_switches_);
  if (!config.events.empty()) {
    event_log_ = std::make_unique<EventLogWriter>(config.events, config.pod, clock_);
    events_.attach(*event_log_);
  }
  server_ = std::make_unique<HttpServer>(io, listen_endpoint(config.listen, "listen"),
                                         [this](const Incoming& in, Respond respond) { api_.handle(in, std::move(respond)); });
}

Service::~Service() = default;

void LimitSwitchLog::on(const model::LimitDecided& e) {
  // A decision the pod's memory of Redis's last refusal made is Redis's still.
  const LimitVia via = e.decision.remembered ? LimitVia::store : e.decision.via;
  const auto it = last_.try_emplace(e.business, LimitVia::store).first;
  if (it->second == via) return;
  it->second = via;
  const std::string limit = e.business == 0 ? "the cluster's limit" : "business " + std::to_string(e.business) + "'s limit";
  if (via == LimitVia::store) {
    std::cerr << "relaysim serve: " << limit << " is decided by Redis again" << std::endl;
  } else {
    std::cerr << "relaysim serve: " << limit << " is decided " << (via == LimitVia::local ? "by this process's share" : "")
              << (via == LimitVia::allow ? "by allowing every submit" : "") << (via == LimitVia::deny ? "by holding every submit" : "")
              << ": Redis is " << (e.decision.store == KvStatus::timeout ? "not answering in time" : "unavailable")
              << " (platform.limit.when_down)" << std::endl;
  }
}

void Service::start() {
  if (event_log_) event_log_->started(clock_.now());
  node_.start();
  poller_.start(config_.poll, [this] { node_.nudge(); });
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
  poller_.stop();
  drain_wait_.start(config_.drain_timeout, [this] { return node_.dispatcher().in_flight(); }, std::move(done));
}

}  // namespace relaysim::live::sms
