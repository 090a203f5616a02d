// OutboxWorldServer: `relaysim world` for an outbox scenario — the downstream the relay's
// consumers hand records to, served for real on HTTP so that the live relay (`relaysim serve`
// with `system: outbox`) can be run and tested against the misbehaviour the simulator models.
//
// The decisions are the simulator's own (sim/outbox/downstream.h's DownstreamFates): latencies,
// outages and slowdowns on the wall clock from the world's start, errors, rejections, answers
// lost, handlers dying. The effect of a handling that arrives is applied through the model's inbox
// (model/outbox/inbox.h's apply_once) to the world's own SQLite database, exactly as the
// simulator's downstream applies it: a message handled twice changes nothing the second time.
//
//   POST /downstream   200 applied (or already applied), 503 failed, 422 rejected, or no answer
//                      (the connection held, then closed: a timeout, a lost answer, a death)
//   GET  /healthz      200
//
// Every handling is a line of the receipts file: when, the record, the fate drawn, and what the
// inbox made of it (applied, duplicate, died), for the judge.
#pragma once

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "live/clock.h"
#include "live/http_server.h"
#include "model/outbox/config.h"
#include "model/outbox/inbox.h"
#include "sim/outbox/downstream.h"
#include "sim/scenario/scenario.h"

namespace relaysim::live::outbox {

struct OutboxWorldOptions {
  std::string listen = "127.0.0.1:8093";
  std::string receipts;             // a file of JSON lines; empty: none kept
  std::string effects = ":memory:";  // the downstream's database: its inbox and its effects
  // The relay's policies (its serve file's platform:): the message types a record names, and how
  // long a consumer waits for an answer.
  relaysim::outbox::RelayConfig platform{};
  // How long a handling that is never answered holds its connection before the world closes it.
  Duration hold = std::chrono::seconds(30);
};

class OutboxWorldServer {
 public:
  // Throws std::invalid_argument for a scenario that is not an outbox scenario or a receipts file
  // that cannot be written; StoreError when the effects database cannot be opened;
  // boost::system::system_error when the address cannot be bound.
  OutboxWorldServer(boost::asio::io_context& io, const sim::Scenario& scenario, OutboxWorldOptions options);
  ~OutboxWorldServer();
  OutboxWorldServer(const OutboxWorldServer&) = delete;
  OutboxWorldServer& operator=(const OutboxWorldServer&) = delete;

  unsigned short port() const { return server_->port(); }
  std::uint64_t handlings() const { return handlings_; }
  // Effects applied (committed) since the start.
  std::uint64_t effects() const { return store_.effects_committed(); }

 private:
  void handle(const Incoming& in, Respond respond);
  void downstream(const Incoming& in, Respond respond);

  boost::asio::io_context& io_;
  OutboxWorldOptions options_;
  LiveClock clock_;
  Time started_;
  sim::outbox::DownstreamFates fates_;
  relaysim::outbox::SqliteEffectStore store_;
  std::ofstream receipts_;
  std::uint64_t handlings_ = 0;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace relaysim::live::outbox
