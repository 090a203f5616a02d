#include "live/webhook/api.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <optional>
#include <unordered_set>
#include <vector>

#include "model/core/assert.h"
#include "model/core/short_text.h"
#include "model/store/store_error.h"
#include "model/webhook/types.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

using nlohmann::json;
using model::RequestId;

std::string stored_payload(const json& payload) { return payload.dump(-1, ' ', false, json::error_handler_t::replace); }

namespace {

Response not_yours(model::RequestId id) {
  return error_response(403, "request " + std::to_string(id) + " is another tenant's");
}

}  // namespace

Response Api::handle(const Incoming& in) {
  const std::size_t question = in.target.find('?');
  const std::string_view path = in.target.substr(0, question);
  try {
    if (path == "/healthz") {  // for load balancers and supervisors: no key
      if (in.method != "GET") return method_not_allowed("GET");
      return json_response(draining_ ? 503 : 200, json{{"status", draining_ ? "draining" : "ok"}});
    }
    // The key is read, never echoed: no answer and no log line repeats it. Given twice, which one
    // counts would depend on who reads it (a proxy may take the last): refused.
    if (in.header_count("authorization") > 1) return error_response(400, "Authorization is given more than once");
    const std::string_view authorization = in.header("authorization");
    if (authorization.empty()) {
      return unauthorized("this API takes a key: send Authorization: Bearer rsk_... "
                          "(`relaysim keys CONFIG --admin` makes one; docs/live.md)");
    }
    const std::optional<Principal> who = keys_.check(bearer_token(authorization));
    if (!who) return unauthorized("the key is not one of this service's, or it was revoked");
    const std::string_view query = question == std::string_view::npos ? std::string_view{} : in.target.substr(question + 1);
    return route(in, path, query, *who);
  } catch (const StoreError& e) {
    return store_failed(e);
  }
}

Response Api::route(const Incoming& in, std::string_view path, std::string_view query, const Principal& who) {
  const auto only = [&](std::string_view method) { return in.method == method; };
  if (path == "/v1/keys" || path.starts_with("/v1/keys/")) {
    if (!who.admin()) return error_response(403, "keys are managed with the admin's key");
    return keys(in, path.substr(std::string_view("/v1/keys").size()));
  }
  if (path == "/metrics") {
    if (!who.admin()) return error_response(403, "/metrics takes the admin's key");
    if (!only("GET")) return method_not_allowed("GET");
    Response r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = metrics_ ? metrics_() : std::string{};
    return r;
  }
  if (path == "/v1/webhooks") {
    if (!only("POST")) return method_not_allowed("POST");
    if (!query.empty()) return error_response(400, "POST /v1/webhooks takes no query");
    return create(in, who);
  }
  if (path == "/v1/dead-letters") {
    if (!only("GET")) return method_not_allowed("GET");
    return dead_letters(query, who);
  }
  constexpr std::string_view kPrefix = "/v1/webhooks/";
  if (path.substr(0, kPrefix.size()) == kPrefix) {
    std::string_view rest = path.substr(kPrefix.size());
    const bool is_replay = rest.size() > 7 && rest.substr(rest.size() - 7) == "/replay";
    if (is_replay) rest = rest.substr(0, rest.size() - 7);
    const std::optional<std::uint64_t> id = whole_number(rest);
    if (!id || *id == 0) return error_response(404, "no such request: '" + std::string(rest) + "' is not a request id");
    if (is_replay) return only("POST") ? replay(*id, who) : method_not_allowed("POST");
    return only("GET") ? show(*id, who) : method_not_allowed("GET");
  }
  return error_response(404, "no such endpoint: " + std::string(path) +
                                 " (the API has /v1/webhooks, /v1/webhooks/{id}, /v1/webhooks/{id}/replay, "
                                 "/v1/dead-letters, /v1/keys, /healthz and /metrics)");
}

Response Api::keys(const Incoming& in, std::string_view rest) {
  RELAYSIM_ASSERT(rest.empty() || rest.front() == '/', "the path after /v1/keys");
  if (rest.empty() || rest == "/") {
    if (in.method == "GET") {
      json items = json::array();
      for (const KeyInfo& k : keys_.list()) {
        json j{{"id", k.id}, {"tenant", k.tenant ? json(*k.tenant) : json(nullptr)}, {"created_at", format_utc(k.created_at)}};
        if (k.revoked_at) j["revoked_at"] = format_utc(*k.revoked_at);
        items.push_back(std::move(j));
      }
      return json_response(200, json{{"keys", std::move(items)}});
    }
    if (in.method != "POST") return method_not_allowed("GET, POST");
    json body;
    if (std::optional<Response> refused = read_json_body(in, body)) return std::move(*refused);
    const bool admin = body.is_object() && body.size() == 1 && body.contains("admin") && body["admin"] == true;
    const bool tenant = body.is_object() && body.size() == 1 && body.contains("tenant") && body["tenant"].is_string() &&
                        !body["tenant"].get_ref<const std::string&>().empty();
    if (!admin && !tenant) return error_response(400, "the body is {\"tenant\": CXID} for a tenant's key, or {\"admin\": true}");
    const std::optional<std::string> whose =
        tenant ? std::optional<std::string>(body["tenant"].get<std::string>()) : std::nullopt;
    if (whose) {
      if (const std::string problem = tenant_problem(*whose); !problem.empty()) return error_response(400, problem);
    }
    const ApiKeys::Created k = keys_.create(whose, clock_.now());
    Response r = json_response(201, json{{"id", k.id}, {"key", k.key}, {"tenant", whose ? json(*whose) : json(nullptr)}});
    r.headers.emplace_back("Cache-Control", "no-store");  // shown once: no cache keeps it
    return r;
  }
  const std::optional<std::uint64_t> id = whole_number(rest.substr(1));
  if (!id || *id == 0 || rest[1] == '0') {
    return error_response(404, "no such key: '" + std::string(rest.substr(1)) + "' is not a key id");
  }
  if (in.method != "DELETE") return method_not_allowed("DELETE");
  switch (keys_.revoke(*id, clock_.now(), /*keep_an_admin=*/true)) {
    case ApiKeys::Revoked::revoked: break;
    case ApiKeys::Revoked::no_such_key: return error_response(404, "no key " + std::to_string(*id) + " that is not revoked");
    case ApiKeys::Revoked::last_admin:
      return error_response(409, "key " + std::to_string(*id) + " is the last admin key: make another before revoking it");
  }
  return json_response(200, json{{"id", *id}, {"revoked", true}});
}

Response Api::create(const Incoming& in, const Principal& who) {
  if (draining_) {
    Response r = error_response(503, "this server is shutting down; send it to another");
    r.headers.emplace_back("Retry-After", "1");
    return r;
  }
  json body;
  if (std::optional<Response> refused = read_json_body(in, body)) return std::move(*refused);
  if (!body.is_object()) return error_response(400, "the body must be a JSON object {\"cxid\", \"request_id\", \"payload\"}");
  for (const auto& [key, value] : body.items()) {
    if (key != "cxid" && key != "request_id" && key != "payload") {
      return error_response(400, "unknown field '" + key + "' (the fields are cxid, request_id and payload)");
    }
  }
  for (const char* key : {"cxid", "request_id"}) {
    const auto it = body.find(key);
    if (it == body.end()) return error_response(400, std::string("missing field '") + key + "'");
    if (!it->is_string()) return error_response(400, std::string("field '") + key + "' must be a string");
  }
  const auto payload = body.find("payload");
  if (payload == body.end()) return error_response(400, "missing field 'payload'");
  const std::string& cxid = body["cxid"].get_ref<const std::string&>();
  const std::string& request_id = body["request_id"].get_ref<const std::string&>();
  if (!who.may_act_for(cxid)) return error_response(403, "this key is tenant " + *who.tenant + "'s: it cannot act for " + cxid);
  // A repeat with the same JSON written otherwise is a duplicate, not a conflict.
  const std::string stored = stored_payload(*payload);
  const model::IngestResult r = ingest_.create(cxid, request_id, stored);
  switch (r.status) {
    case model::IngestStatus::created:
    case model::IngestStatus::duplicate:
      return json_response(202, json{{"id", r.id},
                          {"webhook_id", model::webhook_id_for(r.id)},
                          {"duplicate", r.status == model::IngestStatus::duplicate}});
    case model::IngestStatus::conflict: {
      Response c = error_response(409, "request_id '" + request_id + "' of cxid '" + cxid +
                                           "' was already sent with another payload (request " + std::to_string(r.id) + ")");
      return c;
    }
    case model::IngestStatus::invalid: return error_response(400, r.problem);
    case model::IngestStatus::unavailable: {
      Response u = error_response(503, r.problem);
      u.headers.emplace_back("Retry-After", "1");
      return u;
    }
  }
  return error_response(500, "unknown ingest status");
}

Response Api::show(RequestId id, const Principal& who) {
  RELAYSIM_ASSERT(id != 0, "request ids count from 1");
  const std::optional<model::RequestRow> row = store_.get(id);
  if (!row) return error_response(404, "no request " + std::to_string(id));
  if (!who.may_act_for(row->cxid)) return not_yours(id);
  json attempts = json::array();
  for (const model::AttemptRow& a : store_.attempts(id)) {
    json j{{"number", a.number},
           {"pod", a.pod},
           {"started_at", format_utc(a.started_at)},
           {"finished_at", format_utc(a.finished_at)},
           {"resolved_url", a.resolved_url},
           {"serviceb_version", a.serviceb_version}};
    if (a.error == NetError::none) {
      j["status_code"] = a.http_status;
    } else {
      j["error"] = to_string(a.error);
      if (!a.detail.empty()) j["detail"] = a.detail;  // why nothing was sent: a refused address, a bad URL, a lease that ended first
    }
    attempts.push_back(std::move(j));
  }
  json payload = json::parse(row->payload, nullptr, false);
  json out{{"id", row->id},
           {"webhook_id", model::webhook_id_for(row->id)},
           {"cxid", row->cxid},
           {"request_id", row->request_id},
           {"status", to_string(row->status)},
           {"created_at", format_utc(row->created_at)},
           {"deadline_at", format_utc(row->deadline_at)},
           {"deferrals", row->deferrals},
           {"replays", row->replays},
           {"attempts", std::move(attempts)},
           {"payload", payload.is_discarded() ? json(row->payload) : std::move(payload)}};
  if (model::is_terminal(row->status)) {
    out["reason"] = to_string(row->reason);
    out["finished_at"] = format_utc(row->terminal_at);
  } else if (row->status != model::Status::in_flight) {
    out["next_attempt_at"] = format_utc(row->due_at);
  }
  return json_response(200, out);
}

Response Api::replay(RequestId id, const Principal& who) {
  RELAYSIM_ASSERT(id != 0, "request ids count from 1");
  if (!who.admin()) {
    const std::optional<model::RequestRow> row = store_.get(id);
    if (!row) return error_response(404, "no request " + std::to_string(id));
    if (!who.may_act_for(row->cxid)) return not_yours(id);
  }
  switch (ingest_.replay(id)) {
    case model::ReplayOutcome::replayed: return json_response(202, json{{"id", id}, {"status", "pending"}});
    case model::ReplayOutcome::not_found: return error_response(404, "no request " + std::to_string(id));
    case model::ReplayOutcome::not_terminal:
      return error_response(409, "request " + std::to_string(id) + " is not finished: only a delivered, failed or "
                                 "dead-lettered request can be replayed");
    case model::ReplayOutcome::unavailable: {
      Response u = error_response(503, "the store failed; nothing was replayed: try again");
      u.headers.emplace_back("Retry-After", "1");
      return u;
    }
  }
  return error_response(500, "unknown replay outcome");
}

Response Api::dead_letters(std::string_view query, const Principal& who) {
  std::uint64_t after = 0;
  std::uint64_t limit = 100;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    const std::string_view key = pair.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    const std::optional<std::uint64_t> n = whole_number(value);
    if (key == "after" && n) {
      after = *n;
    } else if (key == "limit" && n && *n >= 1 && *n <= 1000) {
      limit = *n;
    } else {
      return error_response(400, "bad query '" + std::string(pair) + "': it takes after=ID and limit=1..1000");
    }
  }
  RELAYSIM_ASSERT(limit >= 1 && limit <= 1000, "a page holds 1 to 1000 dead letters");
  // A tenant's page holds its own dead letters only: the store's are read in id order and the
  // others' skipped, at most kScan of them a page (then `next` goes on from where it stopped).
  constexpr std::size_t kScan = 10'000;
  json items = json::array();
  std::size_t scanned = 0;
  RequestId last = after;
  bool more = false;
  for (;;) {
    const std::size_t want = limit - items.size();
    const std::vector<RequestId> ids = store_.with_status(model::Status::dead_lettered, last, want);
    for (const RequestId id : ids) {
      last = id;
      ++scanned;
      const std::optional<model::RequestRow> row = store_.get(id);
      if (!row || !who.may_act_for(row->cxid)) continue;
      items.push_back(json{{"id", id},
                           {"cxid", row->cxid},
                           {"request_id", row->request_id},
                           {"attempts", row->attempts},
                           {"finished_at", format_utc(row->terminal_at)}});
    }
    if (ids.size() < want) break;  // the store has no more
    if (items.size() >= limit || scanned >= kScan) {
      more = true;
      break;
    }
  }
  json out{{"dead_letters", std::move(items)}};
  if (more) out["next"] = "/v1/dead-letters?after=" + std::to_string(last) + "&limit=" + std::to_string(limit);
  return json_response(200, out);
}

}  // namespace relaysim::live::webhook
