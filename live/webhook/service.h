// Service: `relaysim serve` — one pod of the webhook platform, live. It is the model's Node (the
// same ingest, resolver and dispatcher the simulator's pods run), wired to ports on Boost.Asio:
// the steady clock and timers, deliveries and ServiceB over HTTP, the SQLite store in WAL, and the
// HTTP API in front.
//
// One process is one pod. Several processes may share one database on one machine: each claims
// under claim tokens the database hands out, and each looks for work the others created every
// `poll`. A request is acknowledged (202) only after its row is committed; with
// `durability: full` (synchronous=FULL) that commit has reached the disk, and survives a power
// loss as well as a kill -9.
//
// Group commit (`group_commit`, on by default): the writes one turn of the loop makes — the
// creates of every request it read, the claims and results of its deliveries — share one
// transaction, committed at the end of the turn (or at kMaxGroupWrites): one fsync for all. Until
// that commit, nothing that depends on them leaves the process: answers, deliveries and event log
// lines wait (Db::when_committed). A commit that fails stops the process (Db::commit_group).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "live/webhook/api.h"
#include "live/clock.h"
#include "live/http_call.h"
#include "live/http_server.h"
#include "live/shutdown.h"
#include "live/webhook/event_log.h"
#include "live/api_keys.h"
#include "live/webhook/metrics.h"
#include "live/webhook/ports.h"
#include "model/core/random.h"
#include "model/store/sqlite_db.h"
#include "model/webhook/config.h"
#include "model/webhook/node.h"
#include "model/webhook/sqlite_store.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

struct ServeConfig {
  model::PlatformConfig platform{};
  std::string listen = "127.0.0.1:8080";
  std::string database = "relaysim.db";
  Durability durability = Durability::full;
  bool group_commit = true;
  std::string serviceb = "http://127.0.0.1:8081/serviceb";
  std::string signing_secret;  // empty: deliveries go unsigned
  struct TenantSecret {
    std::string cxid;
    std::string secret;
    bool operator==(const TenantSecret&) const = default;
  };
  std::vector<TenantSecret> tenant_secrets;  // a tenant's own key, instead of signing_secret
  std::vector<AddressKind> allow_addresses;  // besides global ones
  std::string ca_file;  // more trusted authorities for https, beside the system's
  std::uint32_t pod = 1;
  Duration poll = std::chrono::seconds(1);
  Duration drain_timeout = std::chrono::seconds(30);
  Duration keep_alive = std::chrono::seconds(1);
  // Not a key of the file: `serve --events FILE` appends the model's events there, for
  // `relaysim judge` (live/webhook/event_log.h). Empty: no log.
  std::string events;
  bool operator==(const ServeConfig&) const = default;

  AddressPolicy address_policy() const;
};

class Service {
 public:
  // Opens the database and binds the listening address. Throws StoreError or
  // boost::system::system_error, whose messages say what failed.
  Service(boost::asio::io_context& io, const ServeConfig& config);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  unsigned short port() const { return server_->port(); }
  // Whether the database holds an admin key that is not revoked (live/api_keys.h).
  bool has_admin_key() { return keys_.active_admins() > 0; }
  // Starts delivering what is due.
  void start();
  // Stops accepting and claiming; `done` runs when the attempts in flight have completed, or
  // when drain_timeout has passed (their leases then bring them back for another process).
  void drain(std::function<void(std::uint32_t unfinished)> done);
  // Logs the end of the process (when it logs events): after drain, before it exits.
  void stopped();

 private:
  // A group this large commits at once, not at the end of the turn: a bound on how long its
  // first writer waits.
  static constexpr std::uint32_t kMaxGroupWrites = 1024;

  void handle(const Incoming& in, Respond respond);
  // Commits the open group, if any. Throws StoreError when it is lost: the process must stop.
  void commit();

  boost::asio::io_context& io_;
  const ServeConfig& config_;
  LiveClock clock_;
  AsioTimers timers_;
  Rng rng_;
  HttpCaller caller_;          // deliveries: to the tenants' URLs, behind the address guard
  HttpCaller serviceb_caller_; // ServiceB: the operator's own address, trusted
  DeliveryClient delivery_;
  HttpDirectory directory_;
  LoggedNotices notices_;
  model::SqliteStore store_;
  ApiKeys keys_;
  model::Events events_;
  // serve's log of attempts that sent nothing and never will: a refused address, a bad URL.
  struct NotSentLog final : SinkFor<model::AttemptFinished> {
    void on(const model::AttemptFinished& e) override;
  } not_sent_log_;
  LiveMetrics metrics_;
  std::unique_ptr<EventLogWriter> event_log_;
  model::Node node_;
  Api api_;
  std::unique_ptr<HttpServer> server_;
  Ticker poller_;
  DrainWait drain_wait_;
  bool draining_ = false;
};

}  // namespace relaysim::live::webhook
