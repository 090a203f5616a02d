// The webhook platform's outward ports on HTTP: deliveries (HttpClient) and ServiceB's directory
// of URLs (UrlDirectory). They carry what the model decided and report what happened; what a
// result means (a retry, a terminal failure, an open breaker) is decided in model/, as it is in
// the simulator.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "live/http_call.h"
#include "model/core/http.h"
#include "model/core/ports.h"
#include "model/store/sqlite_db.h"
#include "model/webhook/events.h"
#include "model/webhook/ports.h"
#include "model/webhook/signature.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

// Sends deliveries, signed (Standard Webhooks: webhook-timestamp and webhook-signature beside the
// dispatcher's webhook-id) with the tenant's own key, or the default key, when there is one.
class DeliveryClient final : public HttpClient {
 public:
  using TenantKeys = std::unordered_map<std::string, model::SigningKey>;
  DeliveryClient(HttpCaller& caller, const Clock& clock, std::optional<model::SigningKey> key, TenantKeys tenants = {})
      : caller_(caller), clock_(clock), key_(std::move(key)), tenants_(std::move(tenants)) {}
  void send(const HttpRequest& request, Duration timeout, HttpCallback done) override;
  // From now on a delivery asked for while `db` holds a group of writes open waits for its
  // commit: the claim it is made under, and the create of its request, may be in that group, and
  // a crash before the commit would take them back (and hand the request's id to another). One
  // whose commit comes at or after its send_by (its claim's lease end) is not sent: it is
  // answered too_late.
  void send_after_commit(Db& db) { commits_ = &db; }

 private:
  void send_now(const HttpRequest& request, Duration timeout, HttpCallback done);
  const model::SigningKey* key_for(std::string_view tenant) const;

  Db* commits_ = nullptr;

  HttpCaller& caller_;
  const Clock& clock_;
  std::optional<model::SigningKey> key_;
  TenantKeys tenants_;
};

class EventLogWriter;  // live/webhook/event_log.h

// Tenants' notices, told as `notified` lines of the event log: the relay's TenantNotified event,
// emitted just before it tells this channel, writes the line (EventLogWriter). A notice is out
// once its line is: at once, or, while a group of writes is open, when the group commits and its
// held lines are written. The log's held lines are registered for the commit before this
// callback, so the line is on disk before the relay removes the notice from the outbox; a kill in
// between leaves it there, to be logged again with `sends` above 1. A log that has lost a line (a
// full disk) answers "not out", and the notice is sent again after its lease. Without an event
// log a notice is a line on standard error, written after the commit.
class LoggedNotices final : public model::NoticeChannel {
 public:
  void tell(const model::Notice& notice, model::NoticeCallback done) override;
  // The event log the notices' lines go to (nullptr: standard error).
  void log_to(const EventLogWriter* log) { log_ = log; }
  // From now on a notice told while `db` holds a group of writes open is out when it commits.
  void after_commit(Db& db) { commits_ = &db; }

 private:
  // Once the notice's group (if any) committed: whether its line is out.
  bool out(const model::Notice& notice) const;

  const EventLogWriter* log_ = nullptr;
  Db* commits_ = nullptr;
};

// ServiceB over HTTP: GET {base}/v1/urls/{cxid} answers 200 {"url": ..., "version": n} when it
// holds a URL, 404 when it holds none; anything else (another status, a body that is not that,
// no answer in time) is an error: ServiceB could not answer.
class HttpDirectory final : public model::UrlDirectory {
 public:
  HttpDirectory(HttpCaller& caller, std::string base) : caller_(caller), base_(std::move(base)) {}
  void lookup(std::string_view cxid, Duration timeout, model::LookupCallback done) override;

 private:
  HttpCaller& caller_;
  std::string base_;
};

// serve's log line for an attempt that sent nothing and never will (a refused address, a URL that
// cannot be called), with the request, the URL, the error and why; empty for any other attempt.
std::string not_sent_line(const model::AttemptFinished& e);

// The key a secret names, nothing for an empty secret, or std::invalid_argument saying what `what`
// ("signing_secret", "--signing-secret") got wrong.
std::optional<model::SigningKey> signing_key(const std::string& secret, std::string_view what);

// Retry-After (RFC 9110): delta-seconds ("120"), or an HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT"),
// read against `now` (a date already past is 0); nullopt for anything else: the retry policy
// then decides alone.
std::optional<Duration> parse_retry_after(std::string_view text, Time now);

}  // namespace relaysim::live::webhook
