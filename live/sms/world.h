// SmsWorldServer: `relaysim world` for an SMS scenario — its providers, served for real on HTTP
// so that the live gateway (`relaysim serve` with `system: sms`) can be run and tested against the
// misbehaviour the simulator models, and its recipient directory, written where the gateway reads
// it (live/sms/directory.h).
//
// The decisions are the simulator's own (sim/sms/providers.h): latencies, outages, slowdowns,
// the provider's own rate (429), errors, refusals, answers lost or late, and for each message it
// sent, a delivery receipt after the scenario's delay — lost or undelivered as configured —
// posted back to the gateway, on the wall clock from the world's start.
//
//   POST /providers/{name}/submit    202 accepted, 429, 503, 400 refused, or no answer (the
//                                    connection held, then closed: a timeout, or a lost answer)
//   GET  /healthz                    200
//
// A receipt is POSTed to the gateway's /v1/receipts/{name} with that provider's receipt secret
// (docs/live.md), again every second while the gateway does not take it, for up to a minute.
// Every submit is a line of the receipts file: when, which provider, the message's reference and
// attempt, the fate drawn, and the delivery receipt to come.
#pragma once

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "live/clock.h"
#include "live/http_call.h"
#include "live/http_server.h"
#include "live/sms/config.h"
#include "sim/scenario/scenario.h"
#include "sim/sms/providers.h"
#include "sim/sms/spec.h"

namespace relaysim::live::sms {

struct SmsWorldOptions {
  std::string listen = "127.0.0.1:8091";
  std::string receipts;  // a file of JSON lines; empty: none kept
  // The gateway the receipts go to ("http://127.0.0.1:8090") and each provider's receipt secret,
  // by name: the serve configuration's.
  std::string gateway;
  std::vector<ProviderEndpoint> providers;
  // The gateway's policies: where the run's epoch falls (run_epoch, live/sms/directory.h).
  relaysim::sms::PlatformConfig platform{};
  relaysim::sms::BusinessPolicy business{};
  // Where to write the scenario's recipient directory for the gateway (its serve.directory);
  // empty: none.
  std::string directory;
  // How long a submit that is never answered holds its connection before the world closes it.
  Duration hold = std::chrono::seconds(30);
};

class SmsWorldServer {
 public:
  // Throws std::invalid_argument for a scenario that is not an SMS scenario, a provider of the
  // scenario the options give no secret for, or a receipts file that cannot be written;
  // StoreError when the directory cannot be written; boost::system::system_error when the
  // address cannot be bound.
  SmsWorldServer(boost::asio::io_context& io, const sim::Scenario& scenario, SmsWorldOptions options);
  ~SmsWorldServer();
  SmsWorldServer(const SmsWorldServer&) = delete;
  SmsWorldServer& operator=(const SmsWorldServer&) = delete;

  unsigned short port() const { return server_->port(); }
  std::size_t providers() const { return spec_.providers.size(); }
  std::uint64_t submits() const { return submits_; }

 private:
  void handle(const Incoming& in, Respond respond);
  void submit(std::size_t provider, const Incoming& in, Respond respond);
  void post_receipt(std::size_t provider, std::string reference, bool delivered, int tries_left);

  boost::asio::io_context& io_;
  const sim::sms::SmsSpec& spec_;
  SmsWorldOptions options_;
  LiveClock clock_;
  Time started_;
  sim::sms::SimProviders providers_;
  std::vector<const ProviderEndpoint*> endpoints_;  // by the scenario's provider index
  HttpCaller caller_;
  std::ofstream receipts_;
  std::uint64_t submits_ = 0;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace relaysim::live::sms
