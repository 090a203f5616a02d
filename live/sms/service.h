// Service: `relaysim serve` for a `system: sms` configuration — one pod of the SMS gateway, live.
// It is the model's Node (the same ingest, dispatcher, campaigns and sync-to-async switch the
// simulator's pods run) and BackOffice, wired to ports on Boost.Asio: the steady clock and timers,
// providers over HTTP, the shared limits in Redis (live/redis_kv.h), tokens by libjwt, the SQLite
// store in WAL, and the HTTP API in front (live/sms/api.h).
//
// One process is one pod. Several processes may share one database on one machine: each claims
// under claim tokens the database hands out, each looks for work the others made due every
// `poll`, and a business applied for through one is served by all. A send is answered only after
// its messages are committed (persist, then send); with `durability: full` that commit has
// reached the disk.
#pragma once

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

#include "live/api_keys.h"
#include "live/clock.h"
#include "live/http_call.h"
#include "live/http_server.h"
#include "live/shutdown.h"
#include "live/sms/api.h"
#include "live/sms/config.h"
#include "live/sms/event_log.h"
#include "live/sms/ports.h"
#include "model/core/random.h"
#include "model/sms/backoffice.h"
#include "model/sms/jwt_codec.h"
#include "model/sms/node.h"
#include "model/sms/sqlite_store.h"

namespace relaysim::live::sms {

// Says on standard error when a shared limit's decisions move from Redis to the process's own
// share, or back: the model's LimitDecided says by whom each was decided (`via`).
class LimitSwitchLog final : public SinkFor<model::LimitDecided> {
 public:
  void on(const model::LimitDecided& e) override;

 private:
  std::unordered_map<model::BusinessId, LimitVia> last_;  // by business; 0: the cluster's limit
};

class Service {
 public:
  // Opens the database and the directory, and binds the listening address. Throws StoreError,
  // std::invalid_argument (a directory that is not one) or boost::system::system_error, whose
  // messages say what failed.
  Service(boost::asio::io_context& io, const SmsServeConfig& config);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  unsigned short port() const { return server_->port(); }
  bool has_admin_key() { return keys_.active_admins() > 0; }
  // Logs the end of the process (when it logs events): after drain, before it exits.
  void stopped();
  // Starts sending what is due.
  void start();
  // Stops accepting and claiming; `done` runs when the submits in flight have completed, or when
  // drain_timeout has passed (their leases then bring them back for another process).
  void drain(std::function<void(std::uint32_t unfinished)> done);

 private:
  const SmsServeConfig& config_;
  LiveClock clock_;
  AsioTimers timers_;
  Rng rng_;
  HttpCaller caller_;
  HttpProviders providers_;
  std::unique_ptr<KeyValue> kv_;
  std::unique_ptr<model::Directory> directory_;  // serve.directory's, or an empty one
  model::LibjwtCodec codec_;
  model::SqliteStore store_;
  ApiKeys keys_;
  model::Events events_;
  LimitSwitchLog limit_switches_;
  std::unique_ptr<EventLogWriter> event_log_;
  model::BackOffice office_;
  model::Node node_;
  Api api_;
  std::unique_ptr<HttpServer> server_;
  Ticker poller_;
  DrainWait drain_wait_;
  bool draining_ = false;
};

}  // namespace relaysim::live::sms
