// Api: the live service's HTTP API, as a function from a request to its response. It holds no
// sockets (live/http_server.h reads and writes them) so that the fuzz target and the tests call it
// directly, and no policy: what a create or a replay does is the model's Ingest.
//
//   POST /v1/webhooks               {"cxid", "request_id", "payload"} -> 202 {"id", "webhook_id", "duplicate"}
//   GET  /v1/webhooks/{id}          the request, its status and its attempts
//   POST /v1/webhooks/{id}/replay   a terminal request back to pending with a fresh deadline
//   GET  /v1/dead-letters           ids of dead-lettered requests, a page at a time (?after=&limit=)
//   GET  /healthz                   200 while serving, 503 while draining
//   GET  /metrics                   Prometheus text format
//   POST /v1/keys                   {"tenant": cxid} or {"admin": true} -> 201 {"id", "key", "tenant"}
//   GET  /v1/keys                   the keys (never their secrets)
//   DELETE /v1/keys/{id}            revokes a key
//
// Every call but /healthz carries a key (Authorization: Bearer rsk_...; live/api_keys.h):
// 401 without one or with one that is not valid, 403 for what the key may not do — a tenant's
// key acts on its own tenant's requests only; /metrics and /v1/keys take the admin's. Every
// refusal is a 4xx (or a 503 when the store failed) with {"error": reason}, which never repeats
// the key. docs/live.md is the reference.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "live/http_server.h"
#include "live/json_api.h"
#include "live/api_keys.h"
#include "model/core/ports.h"
#include "model/webhook/ingest.h"
#include "model/webhook/store.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

// The payload as the store keeps and endpoints receive it: the JSON written one way (no spaces,
// keys in order), so that a repeat written with other spacing or key order is the same payload.
std::string stored_payload(const nlohmann::json& payload);

class Api {
 public:
  using MetricsText = std::function<std::string()>;
  Api(model::Ingest& ingest, model::Store& store, ApiKeys& keys, const Clock& clock, MetricsText metrics)
      : ingest_(ingest), store_(store), keys_(keys), clock_(clock), metrics_(std::move(metrics)) {}

  Response handle(const Incoming& in);
  // While draining, /healthz answers 503 (a load balancer stops sending) and creates are refused.
  void set_draining(bool draining) { draining_ = draining; }

 private:
  // After the key check: `path` and `query` are the target's two parts.
  Response route(const Incoming& in, std::string_view path, std::string_view query, const Principal& who);
  Response create(const Incoming& in, const Principal& who);
  Response show(model::RequestId id, const Principal& who);
  Response replay(model::RequestId id, const Principal& who);
  Response dead_letters(std::string_view query, const Principal& who);
  Response keys(const Incoming& in, std::string_view rest);

  model::Ingest& ingest_;
  model::Store& store_;
  ApiKeys& keys_;
  const Clock& clock_;
  MetricsText metrics_;
  bool draining_ = false;
};

}  // namespace relaysim::live::webhook
