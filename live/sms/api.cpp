#include "live/sms/api.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "live/json_api.h"
#include "live/sms/ports.h"
#include "model/core/assert.h"
#include "model/core/random.h"
#include "model/store/store_error.h"

namespace relaysim::live::sms {

using nlohmann::json;

namespace {

// The longest business name and key part taken (what a log line or an index holds comfortably).
constexpr std::size_t kMaxText = model::kMaxNameBytes;

bool printable(std::string_view s) {
  if (s.empty() || s.size() > kMaxText) return false;
  for (const char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

// A string field of `body`, printable, 1 to kMaxText bytes; or why not.
std::optional<std::string_view> text_field(const json& body, const char* name, std::string& problem) {
  if (!body.contains(name) || !body[name].is_string()) {
    problem = std::string("\"") + name + "\" must be a string";
    return std::nullopt;
  }
  const std::string& s = body[name].get_ref<const std::string&>();
  if (!printable(s)) {
    problem = std::string("\"") + name + "\" must be 1 to " + std::to_string(kMaxText) + " printable characters";
    return std::nullopt;
  }
  return std::string_view(s);
}

// A client's biz_id: a text field, without the characters the gateway's own keys use.
std::optional<std::string_view> biz_id_field(const json& body, std::string& problem) {
  std::optional<std::string_view> id = text_field(body, "biz_id", problem);
  if (id && id->find_first_of(model::kKeySeparators) != std::string_view::npos) {
    problem = "\"biz_id\" may not contain # or @: the gateway's own keys use them (a bulk send's <biz_id>#<i>, a "
              "campaign's <biz_id>@<recipient>)";
    return std::nullopt;
  }
  return id;
}

std::optional<std::uint32_t> template_field(const json& body, std::string& problem) {
  if (!body.contains("template") || !body["template"].is_number_unsigned() ||
      body["template"].get<std::uint64_t>() > UINT32_MAX) {
    problem = "\"template\" must be a template id, a whole number below 2^32";
    return std::nullopt;
  }
  return body["template"].get<std::uint32_t>();
}

// What the message sends: its recipient, template and parameters, written one way. A repeat of a
// request with the same key and content is a duplicate; with other content, a conflict.
std::uint64_t content_of(model::Recipient to, std::uint32_t template_id, const json& params) {
  return hash_bytes(std::to_string(to) + "/" + std::to_string(template_id) + "/" + dump_json(params));
}

// The status of an answer the store gave (a refused token is refused_token's).
int status_of(const model::SendAnswer& a) {
  using model::AcceptOutcome;
  RELAYSIM_ASSERT(a.fault == model::AuthFault::none && !a.unavailable, "the store judged the request");
  switch (a.outcome) {
    case AcceptOutcome::accepted: return a.answer == model::Answer::pending ? 202 : 200;
    case AcceptOutcome::duplicate: return 200;
    case AcceptOutcome::conflict:
    case AcceptOutcome::not_resendable: return 409;
    case AcceptOutcome::quota_exhausted: return 429;
    case AcceptOutcome::revoked:
    case AcceptOutcome::unknown_business: return 403;
  }
  return 500;
}

// Why a token was refused, in words that say what to do. `scope`: what a send asked to use.
std::string fault_text(model::AuthFault fault, std::string_view token, const model::SendScope* scope) {
  using model::AuthFault;
  switch (fault) {
    case AuthFault::none: break;
    case AuthFault::malformed:
      if (token.starts_with("rsk_")) {
        return "this is an admin API key: a business calls with the token POST /v1/businesses/{id}/tokens issued it";
      }
      return "the token is not one this gateway issues (a JWT): it is malformed";
    case AuthFault::bad_signature:
      return "the token's signature does not verify: this gateway (its token_secret) did not issue it, or it was altered";
    case AuthFault::wrong_alg: return "the token is signed with another algorithm than HS256";
    case AuthFault::expired: return "the token has expired: ask the back office for a new one";
    case AuthFault::foreign_resource:
      if (scope != nullptr) {
        return "the token does not grant sender '" + std::string(scope->sender).substr(0, 80) + "' with template " +
               std::to_string(scope->template_id);
      }
      return "the token does not grant what the request uses";
    case AuthFault::revoked: return "the business's grant was revoked since this token was issued";
  }
  return "the token is refused";
}

// Why a request was not accepted.
std::string outcome_text(const model::SendAnswer& a, std::size_t messages) {
  using model::AcceptOutcome;
  switch (a.outcome) {
    case AcceptOutcome::accepted:
    case AcceptOutcome::duplicate: break;
    case AcceptOutcome::conflict:
      return "conflict: a message of this business already has this key with other content (or the request names a "
             "key twice)";
    case AcceptOutcome::revoked: return "revoked: the business's grant was revoked since this token was issued";
    case AcceptOutcome::quota_exhausted:
      return "quota_exhausted: " + std::to_string(messages) + (messages == 1 ? " message" : " messages") + " asked, " +
             std::to_string(a.quota_left) + " left in this quota period";
    case AcceptOutcome::unknown_business: return "unknown_business: the token's business is not in this gateway's store";
    case AcceptOutcome::not_resendable: return "not_resendable: resend_of must name one of this business's failed messages";
  }
  return std::string(to_string(a.outcome));
}

// A refused token's answer: 403 when it is good but may not do this, 401 otherwise. `scope`: what a
// send asked to use, if it was one.
Response refused_token(model::AuthFault fault, std::string_view token, const model::SendScope* scope = nullptr) {
  const int status = fault == model::AuthFault::revoked || fault == model::AuthFault::foreign_resource ? 403 : 401;
  Response r = json_response(status, json{{"error", "the token is refused: " + fault_text(fault, token, scope)},
                                          {"fault", to_string(fault)}});
  if (status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"relaysim-sms\"");
  return r;
}

Response answer_json(const model::SendAnswer& a, std::size_t messages, std::string_view token,
                     const model::SendScope& scope) {
  if (a.fault != model::AuthFault::none) return refused_token(a.fault, token, &scope);
  json body;
  if (a.unavailable) {
    Response r = error_response(503, "the store failed; nothing was accepted: try again");
    r.headers.emplace_back("Retry-After", "1");
    return r;
  } else {
    body = json{{"outcome", to_string(a.outcome)}, {"answer", to_string(a.answer)}, {"quota_left", a.quota_left}};
    if (a.first != 0) body["id"] = a.first;
    if (a.outcome == model::AcceptOutcome::accepted) {
      json ids = json::array();
      for (std::size_t i = 0; i < messages; ++i) ids.push_back(a.first + i);
      body["ids"] = std::move(ids);
      if (messages == 1) body["path"] = to_string(a.path);
    }
    if (a.outcome != model::AcceptOutcome::accepted && a.outcome != model::AcceptOutcome::duplicate) {
      body["error"] = "not accepted: " + outcome_text(a, messages);
    }
  }
  return json_response(status_of(a), body);
}

json message_json(const model::MessageRow& m, const std::vector<model::StatusChange>& history,
                  const std::vector<ProviderEndpoint>& providers) {
  const auto provider_name = [&](model::ProviderId p) {
    return p < providers.size() ? json(providers[p].name) : json(nullptr);
  };
  json h = json::array();
  for (const model::StatusChange& c : history) {
    json e{{"at", format_utc(c.at)}, {"status", to_string(c.status)}};
    if (c.reason != model::Reason::none) e["reason"] = to_string(c.reason);
    if (c.provider != model::kNoProvider) e["provider"] = provider_name(c.provider);
    if (c.pod != 0) e["pod"] = c.pod;
    h.push_back(std::move(e));
  }
  json out{{"id", m.id},
           {"biz_type", m.biz_type},
           {"biz_id", m.biz_id},
           {"to", format_recipient(m.recipient)},
           {"template", m.template_id},
           {"kind", to_string(m.kind)},
           {"status", to_string(m.status)},
           {"answer", to_string(model::answer_for(m.status))},
           {"attempts", m.attempts},
           {"provider", provider_name(m.provider)},
           {"created_at", format_utc(m.created_at)},
           {"send_at", format_utc(m.send_at)},
           {"history", std::move(h)}};
  if (m.reason != model::Reason::none) out["reason"] = to_string(m.reason);
  if (model::is_final(m.status)) out["final_at"] = format_utc(m.final_at);
  if (m.resend_of != 0) out["resend_of"] = m.resend_of;
  if (m.campaign != 0) out["campaign"] = m.campaign;
  return out;
}

// The value of `name` in a query string, its %XX escapes decoded (a `+` is a plus: these are the
// caller's own identifiers, not a form); nullopt when absent or badly escaped.
std::optional<std::string> query_value(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) return percent_decoded(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}


Response draining_refusal() {
  Response r = error_response(503, "this server is shutting down; send it to another");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

// Compares two secrets in time that does not depend on where they differ.
bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// What a send and a campaign both carry: the resources they use, their key, the template's
// parameters, and when they go out.
struct RequestHead {
  std::string_view sender;
  std::string_view biz_type;
  std::string_view biz_id;
  std::uint32_t template_id = 0;
  json params;
  Time send_at{};
  bool scheduled = false;  // send_at is later than now
};

// Reads the fields every request of a business has into `out`; or the 400 to answer.
std::optional<Response> read_head(const json& body, Time now, RequestHead& out) {
  std::string problem;
  const std::optional<std::string_view> sender = text_field(body, "sender", problem);
  const std::optional<std::string_view> biz_type = sender ? text_field(body, "biz_type", problem) : std::nullopt;
  const std::optional<std::string_view> biz_id = biz_type ? biz_id_field(body, problem) : std::nullopt;
  const std::optional<std::uint32_t> template_id = biz_id ? template_field(body, problem) : std::nullopt;
  if (!template_id) return error_response(400, problem);
  out.sender = *sender;
  out.biz_type = *biz_type;
  out.biz_id = *biz_id;
  out.template_id = *template_id;
  out.params = body.contains("params") ? body["params"] : json::object();
  if (!out.params.is_object()) return error_response(400, "\"params\" must be an object of the template's parameters");
  out.send_at = now;
  if (body.contains("send_at")) {
    const std::optional<Time> at =
        body["send_at"].is_string() ? parse_utc(body["send_at"].get_ref<const std::string&>()) : std::nullopt;
    if (!at) return error_response(400, "\"send_at\" must be a UTC time such as \"2026-12-05T18:00:00Z\"");
    if (*at > now + model::kLongestSchedule) return error_response(400, "\"send_at\" is more than 366 days ahead");
    out.scheduled = *at > now;
    out.send_at = std::max(*at, now);
  }
  return std::nullopt;
}

}  // namespace

Api::Api(model::Node& node, model::BackOffice& office, model::Store& store, ApiKeys& keys, model::TokenCodec& codec,
         const Clock& clock, const std::vector<ProviderEndpoint>& providers)
    : node_(node), office_(office), store_(store), keys_(keys), auth_(codec, clock, 256), clock_(clock), providers_(providers) {}

void Api::handle(const Incoming& in, Respond respond) {
  const std::size_t question = in.target.find('?');
  const std::string_view path = in.target.substr(0, question);
  const std::string_view query = question == std::string_view::npos ? std::string_view{} : in.target.substr(question + 1);
  try {
    if (path == "/healthz") {
      if (in.method != "GET") return respond(method_not_allowed("GET"));
      return respond(json_response(draining_ ? 503 : 200, json{{"status", draining_ ? "draining" : "ok"}}));
    }
    if (in.header_count("authorization") > 1) return respond(error_response(400, "Authorization is given more than once"));
    if (path == "/v1/businesses" || path.starts_with("/v1/businesses/")) return respond(admin(in, path));
    if (path.starts_with("/v1/receipts/")) return respond(receipt(in, path.substr(13)));
    if (path == "/v1/sms" || path.starts_with("/v1/sms/") || path == "/v1/quota" || path == "/v1/campaigns") {
      return business_call(in, path, query, respond);
    }
    return respond(error_response(404, "no such endpoint: " + std::string(path).substr(0, 200) +
                                           " (the API has /v1/sms, /v1/sms/{id}, /v1/quota, /v1/campaigns, "
                                           "/v1/businesses, /v1/receipts/{provider} and /healthz)"));
  } catch (const StoreError& e) {
    return respond(store_failed(e));
  }
}

Response Api::admin(const Incoming& in, std::string_view path) {
  const std::string_view authorization = in.header("authorization");
  if (authorization.empty()) {
    return unauthorized("the back office takes the admin's key: send Authorization: Bearer rsk_... "
                        "(`relaysim keys CONFIG --admin` makes one)");
  }
  const std::optional<Principal> who = keys_.check(bearer_token(authorization));
  if (!who && bearer_token(authorization).starts_with("eyJ")) {
    return unauthorized("this is a business's token: the back office takes the admin's API key (rsk_...)");
  }
  if (!who) return unauthorized("the key is not one of this service's, or it was revoked");
  if (!who->admin()) return error_response(403, "the back office takes the admin's key");
  if (path == "/v1/businesses") {
    if (in.method != "POST") return method_not_allowed("POST");
    json body;
    if (std::optional<Response> refused = read_json_body(in, body)) return std::move(*refused);
    if (!body.is_object()) return error_response(400, "the body is {\"name\", \"senders\", \"templates\", \"quota\"}");
    if (std::optional<Response> r = only_fields(body, {"name", "senders", "templates", "quota"})) return std::move(*r);
    std::string problem;
    const std::optional<std::string_view> name = text_field(body, "name", problem);
    if (!name) return error_response(400, problem);
    model::Application app;
    app.name = std::string(*name);
    if (!body.contains("senders") || !body["senders"].is_array() || body["senders"].empty() ||
        body["senders"].size() > model::kMaxSenders) {
      return error_response(400, "\"senders\" must be a list of 1 to " + std::to_string(model::kMaxSenders) + " sender names");
    }
    for (const json& s : body["senders"]) {
      if (!s.is_string() || !printable(s.get_ref<const std::string&>()) ||
          s.get_ref<const std::string&>().size() > model::kMaxSenderBytes) {
        return error_response(400, "each sender is 1 to " + std::to_string(model::kMaxSenderBytes) + " printable characters");
      }
      app.senders.push_back(s.get<std::string>());
    }
    if (!body.contains("templates") || !body["templates"].is_array() || body["templates"].empty() ||
        body["templates"].size() > model::kMaxTemplates) {
      return error_response(400, "\"templates\" must be a list of 1 to " + std::to_string(model::kMaxTemplates) +
                                     " template ids");
    }
    for (const json& t : body["templates"]) {
      if (!t.is_number_unsigned() || t.get<std::uint64_t>() > UINT32_MAX) {
        return error_response(400, "each template id is a whole number below 2^32");
      }
      app.templates.push_back(t.get<std::uint32_t>());
    }
    if (!body.contains("quota") || !body["quota"].is_number_unsigned()) {
      return error_response(400, "\"quota\" must be a whole number of messages per quota period");
    }
    app.quota = body["quota"].get<std::uint64_t>();
    const model::BusinessId id = office_.apply(app);
    return json_response(201, json{{"id", id}, {"name", app.name}, {"state", "applied"}});
  }
  std::string_view rest = path.substr(std::string_view("/v1/businesses/").size());
  const std::size_t slash = rest.find('/');
  const std::optional<std::uint64_t> id = whole_number(rest.substr(0, slash));
  if (!id || *id == 0 || *id > UINT32_MAX) {
    return error_response(404, "no such business: '" + std::string(rest.substr(0, slash)).substr(0, 40) + "' is not an id");
  }
  const auto business = static_cast<model::BusinessId>(*id);
  const std::string_view action = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  if (action.empty()) {
    if (in.method != "GET") return method_not_allowed("GET");
    const std::optional<model::BusinessRow> row = store_.business(business);
    if (!row) return error_response(404, "no business " + std::to_string(business));
    const std::optional<model::QuotaView> q = office_.quota(business);
    RELAYSIM_ASSERT(q.has_value(), "a business that exists has a quota");
    return json_response(200, json{{"id", row->id},
                                   {"name", row->name},
                                   {"state", to_string(row->state)},
                                   {"senders", row->senders},
                                   {"templates", row->templates},
                                   {"quota", q->quota},
                                   {"quota_used", q->used},
                                   {"quota_left", q->left},
                                   {"period_ends", format_utc(q->period_ends)}});
  }
  if (in.method != "POST") return method_not_allowed("POST");
  if (action == "tokens") {
    const std::optional<std::string> token = office_.issue_token(business);
    if (!token) {
      return store_.business(business) ? error_response(409, "business " + std::to_string(business) + " is not approved")
                                       : error_response(404, "no business " + std::to_string(business));
    }
    Response r = json_response(201, json{{"token", *token}, {"business", business}});
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
  }
  model::AdminOutcome outcome;
  if (action == "approve") {
    outcome = office_.approve(business);
  } else if (action == "reject") {
    outcome = office_.reject(business);
  } else if (action == "revoke") {
    outcome = office_.revoke(business);
  } else {
    return error_response(404, "no such action: '" + std::string(action).substr(0, 40) +
                                   "' (a business takes approve, reject, revoke and tokens)");
  }
  switch (outcome) {
    case model::AdminOutcome::done: break;
    case model::AdminOutcome::not_found: return error_response(404, "no business " + std::to_string(business));
    case model::AdminOutcome::wrong_state: {
      const std::optional<model::BusinessRow> row = store_.business(business);
      const std::string_view done = action == "approve" ? "approved" : action == "reject" ? "rejected" : "revoked";
      return error_response(409, "business " + std::to_string(business) + " is " +
                                     std::string(row ? to_string(row->state) : "gone") + ": it cannot be " +
                                     std::string(done) + " (applied -> approved or rejected; approved -> revoked; "
                                     "revoked -> approved)");
    }
  }
  return json_response(200, json{{"id", business}, {"state", to_string(store_.business(business)->state)}});
}

void Api::business_call(const Incoming& in, std::string_view path, std::string_view query, Respond& respond) {
  const std::string_view token = bearer_token(in.header("authorization"));
  if (token.empty()) {
    Response r = error_response(401, "a business calls with its token: send Authorization: Bearer <token> "
                                     "(POST /v1/businesses/{id}/tokens issues one)");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"relaysim-sms\"");
    return respond(std::move(r));
  }
  if (path == "/v1/sms" && in.method == "POST") {
    if (!query.empty()) return respond(error_response(400, "POST /v1/sms takes no query"));
    return send(in, token, respond);
  }
  if (path == "/v1/campaigns") {
    if (in.method != "POST") return respond(method_not_allowed("POST"));
    return respond(campaign(in, token));
  }
  if (in.method != "GET") return respond(method_not_allowed(path == "/v1/sms" ? "GET, POST" : "GET"));
  model::AuthResult who = auth_.identify(token);
  if (who.fault == model::AuthFault::none) who.fault = office_.standing(who.business, who.epoch);
  if (who.fault != model::AuthFault::none) return respond(refused_token(who.fault, token));
  if (path == "/v1/quota") {
    const std::optional<model::QuotaView> q = office_.quota(who.business);
    RELAYSIM_ASSERT(q.has_value(), "a business in standing exists");
    return respond(json_response(200, json{{"business", who.business},
                                           {"quota", q->quota},
                                           {"used", q->used},
                                           {"left", q->left},
                                           {"period_ends", format_utc(q->period_ends)}}));
  }
  return respond(show(who, path, query));
}

Response Api::show(const model::AuthResult& who, std::string_view path, std::string_view query) {
  std::optional<model::MessageId> id;
  if (path == "/v1/sms") {
    const std::optional<std::string> type = query_value(query, "biz_type");
    const std::optional<std::string> key = query_value(query, "biz_id");
    if (!type || !key || type->empty() || key->empty()) {
      return error_response(400, "GET /v1/sms takes ?biz_type=TYPE&biz_id=ID, %XX-escaped (or GET /v1/sms/{id})");
    }
    id = store_.find(who.business, *type, *key);
    if (!id) return error_response(404, "no message of this business with that biz_type and biz_id");
  } else {
    const std::string_view text = path.substr(std::string_view("/v1/sms/").size());
    id = whole_number(text);
    if (!id || *id == 0) return error_response(404, "no such message: '" + std::string(text).substr(0, 40) + "' is not an id");
  }
  const std::optional<model::MessageRow> row = store_.get(*id);
  // Another business's message is not shown, nor said to exist.
  if (!row || row->business != who.business) return error_response(404, "no message " + std::to_string(*id) + " of this business");
  return json_response(200, message_json(*row, store_.history(*id), providers_));
}

void Api::send(const Incoming& in, std::string_view token, Respond& respond) {
  if (draining_) return respond(draining_refusal());
  json body;
  if (std::optional<Response> refused = read_json_body(in, body)) return respond(std::move(*refused));
  if (!body.is_object()) return respond(error_response(400, "the body is a JSON object (docs/live.md: POST /v1/sms)"));
  if (std::optional<Response> r =
          only_fields(body, {"sender", "template", "params", "biz_type", "biz_id", "to", "send_at", "resend_of"})) {
    return respond(std::move(*r));
  }
  RequestHead head;
  if (std::optional<Response> refused = read_head(body, clock_.now(), head)) return respond(std::move(*refused));
  std::vector<model::Recipient> to;
  const json& recipients = body.contains("to") ? body["to"] : json();
  const bool bulk = recipients.is_array();
  if (recipients.is_string()) {
    to.push_back(0);
  } else if (!bulk || recipients.empty() || recipients.size() > kMaxBulk) {
    return respond(error_response(400, "\"to\" must be a number such as \"+4915112345678\", or a list of 1 to " +
                                           std::to_string(kMaxBulk) + " of them (a bulk send)"));
  }
  if (bulk) to.resize(recipients.size());
  for (std::size_t i = 0; i < to.size(); ++i) {
    const json& r = bulk ? recipients[i] : recipients;
    const std::optional<model::Recipient> n = r.is_string() ? parse_recipient(r.get_ref<const std::string&>()) : std::nullopt;
    if (!n) {
      return respond(error_response(400, (bulk ? "\"to\"[" + std::to_string(i) + "]" : std::string("\"to\"")) +
                                             " is not a number in E.164 (a + and 8 to 15 digits, the first not 0)"));
    }
    to[i] = *n;
  }
  model::MessageId resend_of = 0;
  if (body.contains("resend_of")) {
    if (!body["resend_of"].is_number_unsigned() || body["resend_of"].get<std::uint64_t>() == 0 || bulk) {
      return respond(error_response(400, "\"resend_of\" is the id of one failed message, resent to one number"));
    }
    resend_of = body["resend_of"].get<std::uint64_t>();
  }
  std::vector<std::string> keys(to.size());
  std::vector<model::NewMessage> messages(to.size());
  for (std::size_t i = 0; i < to.size(); ++i) {
    keys[i] = std::string(head.biz_id);
    if (bulk) model::add_bulk_index(keys[i], i);
    model::NewMessage& m = messages[i];
    m.biz_type = head.biz_type;
    m.biz_id = keys[i];
    m.recipient = to[i];
    m.template_id = head.template_id;
    m.content = content_of(to[i], head.template_id, head.params);
    m.kind = resend_of != 0 ? model::Kind::resend
             : bulk         ? model::Kind::bulk
             : head.scheduled ? model::Kind::scheduled
                              : model::Kind::single;
    m.send_at = head.send_at;
    m.resend_of = resend_of;
  }
  const model::SendRequest request{token, head.sender, head.template_id, messages};
  // The answer may come later (a synchronous send waits for its provider), after the views of the
  // request die (the node copies what it keeps before send() returns); a refusal's reason names the
  // token's kind and the scope, so the answer keeps copies of those.
  struct Context {
    std::size_t messages;
    std::string token;
    std::string sender;
    std::uint32_t template_id;
  };
  auto context =
      std::make_shared<const Context>(Context{messages.size(), std::string(token), std::string(head.sender), head.template_id});
  node_.send(request, [respond = std::move(respond), context = std::move(context)](const model::SendAnswer& a) {
    respond(answer_json(a, context->messages, context->token, model::SendScope{context->sender, context->template_id}));
  });
}

Response Api::campaign(const Incoming& in, std::string_view token) {
  if (draining_) return draining_refusal();
  json body;
  if (std::optional<Response> refused = read_json_body(in, body)) return std::move(*refused);
  if (!body.is_object()) return error_response(400, "the body is a JSON object (docs/live.md: POST /v1/campaigns)");
  if (std::optional<Response> r = only_fields(body, {"sender", "template", "params", "biz_type", "biz_id", "filter", "send_at"})) {
    return std::move(*r);
  }
  RequestHead head;
  if (std::optional<Response> refused = read_head(body, clock_.now(), head)) return std::move(*refused);
  if (!body.contains("filter") || !body["filter"].is_string() || body["filter"].get_ref<const std::string&>().size() > 4096) {
    return error_response(400, "\"filter\" must be a filter of at most 4096 bytes (docs/design/sms.md: the language)");
  }
  model::CampaignRequest request;
  request.token = token;
  request.sender = head.sender;
  request.template_id = head.template_id;
  request.biz_type = head.biz_type;
  request.biz_id = head.biz_id;
  request.filter = body["filter"].get_ref<const std::string&>();
  request.content = content_of(0, head.template_id, head.params);
  request.send_at = head.send_at;
  const model::CampaignAnswer a = node_.campaign(request);
  if (a.fault != model::AuthFault::none) return refused_token(a.fault, token);
  if (a.unavailable) return store_failed(StoreError(StoreFailure::io, "the store failed; nothing was stored"));
  if (a.filter_error) {
    return json_response(400, json{{"error", "the filter does not parse at column " + std::to_string(a.filter_error->column()) +
                                                 ": " + a.filter_error->message},
                                   {"column", a.filter_error->column()}});
  }
  json out{{"outcome", to_string(a.outcome)}};
  if (a.id != 0) out["id"] = a.id;
  switch (a.outcome) {
    case model::AcceptOutcome::accepted: return json_response(202, out);
    case model::AcceptOutcome::duplicate: return json_response(200, out);
    case model::AcceptOutcome::conflict: out["error"] = "another campaign has this key"; return json_response(409, out);
    default: out["error"] = "not accepted: " + std::string(to_string(a.outcome)); return json_response(403, out);
  }
}

Response Api::receipt(const Incoming& in, std::string_view provider) {
  std::size_t index = providers_.size();
  for (std::size_t i = 0; i < providers_.size(); ++i) {
    if (providers_[i].name == provider) index = i;
  }
  if (index == providers_.size()) return error_response(404, "no provider called '" + std::string(provider).substr(0, 80) + "'");
  if (!same_secret(bearer_token(in.header("authorization")), providers_[index].receipt_secret)) {
    return unauthorized("a receipt carries its provider's receipt_secret: Authorization: Bearer <secret>");
  }
  if (in.method != "POST") return method_not_allowed("POST");
  json body;
  if (std::optional<Response> refused = read_json_body(in, body)) return std::move(*refused);
  if (!body.is_object()) return error_response(400, "the body is {\"reference\", \"status\"}");
  if (std::optional<Response> r = only_fields(body, {"reference", "status"})) return std::move(*r);
  const std::optional<std::uint64_t> id =
      body.contains("reference") && body["reference"].is_string() ? whole_number(body["reference"].get_ref<const std::string&>())
                                                                 : std::nullopt;
  if (!id || *id == 0) return error_response(400, "\"reference\" must be the message id the submit gave, as a string");
  const json& status = body.contains("status") ? body["status"] : json();
  if (status != "delivered" && status != "undelivered") {
    return error_response(400, "\"status\" must be \"delivered\" or \"undelivered\"");
  }
  node_.receipt(*id, static_cast<model::ProviderId>(index), status == "delivered");
  return json_response(202, json{{"reference", std::to_string(*id)}, {"received", true}});
}

}  // namespace relaysim::live::sms
