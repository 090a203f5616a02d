#include "live/webhook/service.h"

#include <boost/asio/post.hpp>

#include <iostream>
#include <stdexcept>

#include "model/core/assert.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

namespace {

DeliveryClient::TenantKeys tenant_keys(const ServeConfig& config) {
  DeliveryClient::TenantKeys keys;
  for (const ServeConfig::TenantSecret& t : config.tenant_secrets) {
    std::optional<model::SigningKey> key = signing_key(t.secret, "tenant_secrets");
    RELAYSIM_ASSERT(key.has_value(), "a tenant's secret was checked as a key when the file was read");
    keys.emplace(t.cxid, *key);
  }
  return keys;
}

}  // namespace

AddressPolicy ServeConfig::address_policy() const {
  AddressPolicy p;
  for (const AddressKind k : allow_addresses) {
    p.loopback |= k == AddressKind::loopback;
    p.private_network |= k == AddressKind::private_network;
    p.link_local |= k == AddressKind::link_local;
  }
  return p;
}

Service::Service(boost::asio::io_context& io, const ServeConfig& config)
    : io_(io),
      config_(config),
      timers_(io, clock_),
      rng_(fresh_seed()),
      caller_(io, config.address_policy(), config.ca_file, config.keep_alive),
      serviceb_caller_(io, AddressPolicy{true, true, true}, config.ca_file, config.keep_alive),
      delivery_(caller_, clock_, signing_key(config.signing_secret, "signing_secret"), tenant_keys(config)),
      directory_(serviceb_caller_, config.serviceb),
      store_(config.database, config.durability),
      keys_(store_.db()),
      metrics_(store_),
      node_(config.pod, config.platform, model::NodePorts{clock_, timers_, rng_, delivery_, directory_, store_, events_, notices_}),
      api_(node_.ingest(), store_, keys_, clock_, [this] { return metrics_.text(); }),
      poller_(io),
      drain_wait_(io, clock_) {
  RELAYSIM_ASSERT(config.pod >= 1, "live pods are numbered from 1");
  events_.attach(metrics_);
  events_.attach(not_sent_log_);
  if (!config.events.empty()) {
    event_log_ = std::make_unique<EventLogWriter>(config.events, config.pod);
    events_.attach(*event_log_);
    notices_.log_to(event_log_.get());
  }
  if (config.group_commit && config.durability != Durability::off) {
    // The commit runs behind the handlers already queued: every request this turn read joins.
    store_.db().group_commits([this] { boost::asio::post(io_, [this] { commit(); }); });
    delivery_.send_after_commit(store_.db());
    notices_.after_commit(store_.db());
    if (event_log_) event_log_->hold_for(store_.db());
  }
  ServerLimits limits;
  // The body holds the payload and the two keys, in JSON (escapes may double a payload's length).
  limits.max_body = 2 * config.platform.max_payload_bytes + 2 * config.platform.max_key_bytes + 4096;
  server_ = std::make_unique<HttpServer>(io, listen_endpoint(config.listen, "listen"),
                                         [this](const Incoming& in, Respond respond) { handle(in, std::move(respond)); },
                                         limits);
}

Service::~Service() = default;

void Service::NotSentLog::on(const model::AttemptFinished& e) {
  if (const std::string line = not_sent_line(e); !line.empty()) std::cerr << line << std::endl;
}

void Service::start() {
  if (event_log_) event_log_->started(clock_.now());
  node_.start();
  poller_.start(config_.poll, [this] { node_.nudge(); });
}

void Service::handle(const Incoming& in, Respond respond) {
  RELAYSIM_ASSERT(static_cast<bool>(respond), "a request has someone to answer it");
  const Time began = clock_.now();
  Response r = api_.handle(in);
  const bool ingest = in.method == "POST" && in.target == "/v1/webhooks";
  Db& db = store_.db();
  if (db.group_writes() >= kMaxGroupWrites) commit();
  // Every answer given while a group is open waits for it, not only a create's: a read may have
  // seen the group's rows, which a crash before the commit would take back.
  db.when_committed([this, began, ingest, respond = std::move(respond), r = std::move(r)](bool committed) mutable {
    if (!committed) {
      Response lost = error_response(503, "the store lost this write; try again");
      lost.headers.emplace_back("Retry-After", "1");
      respond(std::move(lost));
      return;
    }
    if (ingest) metrics_.observe_ingest(clock_.now() - began);
    respond(std::move(r));
  });
}

void Service::commit() {
  Db& db = store_.db();
  if (!db.group_open()) return;
  metrics_.observe_group(db.commit_group());
}

void Service::drain(std::function<void(std::uint32_t)> done) {
  if (draining_) return;
  draining_ = true;
  api_.set_draining(true);
  server_->stop_accepting();
  node_.stop();
  poller_.stop();
  drain_wait_.start(config_.drain_timeout, [this] { return node_.dispatcher().in_flight(); },
                    [this, done = std::move(done)](std::uint32_t left) {
                      // The process ends with the loop: what its last turn wrote commits now, and
                      // then what that commit's callbacks wrote (the removal of notices just
                      // logged). The relay is stopped, so they write nothing more.
                      while (store_.db().group_open()) commit();
                      done(left);
                    });
}

void Service::stopped() {
  if (event_log_) event_log_->stopped(clock_.now());
}

}  // namespace relaysim::live::webhook
