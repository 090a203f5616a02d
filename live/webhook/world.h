// WorldServer: `relaysim world` — a scenario's ServiceB and endpoints, served for real on HTTP so
// that the live service can be run and tested against the misbehaviour the simulator models.
//
// The decisions are the simulator's own (sim/webhook/serviceb.h, endpoints.h): latencies, error
// rates, 429s with Retry-After, black holes, lost responses, outages and URL changes, on the wall
// clock from the world's start. What HTTP over one loopback port cannot show is shown the nearest
// way: a DNS failure or a refused connection (an endpoint that is down) closes the connection
// without an answer.
//
//   GET  /serviceb/v1/urls/{cxid}           200 {"url", "version"}, 404, 503, or no answer
//   POST /ep{n}/hooks/{cxid}/v{version}     the endpoint n's answer
//   GET  /healthz                           200
//
// Every request an endpoint processes is a receipt, written as one JSON line to the receipts file:
// when, which endpoint and group, the webhook-id, the status answered, whether the answer was sent,
// whether the signature verified, and the payload's key number and digest. The file starts with a
// line naming the world and when its clock started ({"world": {...}}).
#pragma once

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "live/clock.h"
#include "live/http_server.h"
#include "model/webhook/signature.h"
#include "sim/kernel/kernel.h"
#include "sim/scenario/scenario.h"
#include "sim/webhook/endpoints.h"
#include "sim/webhook/serviceb.h"
#include "sim/webhook/spec.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

// The world serves the simulator's URLs on its own address `base` (http://127.0.0.1:8081): the
// simulator's http://ep3.sim/hooks/cx7/v2 is base/ep3/hooks/cx7/v2. Both directions, in one place.
std::string live_url(std::string_view sim_url, std::string_view base);
// The inverse; anything not on `base` (another scheme, host or port) is left as it is, and is no
// URL ServiceB gave.
std::string sim_url(std::string_view live_url, std::string_view base);

struct WorldOptions {
  std::string listen = "127.0.0.1:8081";
  std::string receipts;        // a file of JSON lines; empty: none kept
  std::string signing_secret;  // verify deliveries' signatures with it; empty: not checked
  // How long a request that is never answered (a black hole, a lost response, a ServiceB outage
  // that times out) holds its connection before the world closes it.
  Duration hold = std::chrono::minutes(5);
};

class WorldServer {
 public:
  // Throws std::invalid_argument for a scenario that is not a webhook scenario or bad options,
  // boost::system::system_error when the address cannot be bound.
  WorldServer(boost::asio::io_context& io, const sim::Scenario& scenario, WorldOptions options);
  ~WorldServer();
  WorldServer(const WorldServer&) = delete;
  WorldServer& operator=(const WorldServer&) = delete;

  unsigned short port() const { return server_->port(); }
  std::uint32_t cxids() const { return cxids_; }
  std::uint32_t endpoints() const { return endpoints_.count(); }
  std::uint64_t receipts() const { return receipt_count_; }
  // When the world's clock started (its time zero), on the live clock.
  Time started() const { return started_; }

 private:
  void handle(const Incoming& in, Respond respond);
  void lookup(std::string_view cxid, Respond respond);
  void deliver(const Incoming& in, std::string_view path, Respond respond);
  // Answers after `delay` (a drop closes the connection instead).
  void later(Duration delay, Response response, Respond respond);
  Time world_now();

  boost::asio::io_context& io_;
  const sim::webhook::WebhookSpec& spec_;
  WorldOptions options_;
  LiveClock clock_;
  Time started_;
  sim::Kernel kernel_;  // world time, for the scenario's URL changes
  std::uint32_t cxids_;
  sim::webhook::ServiceB serviceb_;
  sim::webhook::Endpoints endpoints_;
  std::optional<model::SigningKey> key_;
  std::ofstream receipts_;
  std::uint64_t receipt_count_ = 0;
  std::string base_;  // "http://127.0.0.1:8081"
  std::unique_ptr<HttpServer> server_;
};

}  // namespace relaysim::live::webhook
