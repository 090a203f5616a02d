// Api: the SMS gateway's HTTP API, as a function from a request to its response. It holds no
// sockets (live/http_server.h reads and writes them) and no policy: what a send, a campaign, an
// approval or a receipt does is the model's (model/sms/node.h, model/sms/backoffice.h).
//
// Three kinds of caller, each with its own credential (Authorization: Bearer ...):
//   the admin, with an API key (`relaysim keys CONFIG --admin`; live/api_keys.h):
//     POST /v1/businesses                 {"name", "senders", "templates", "quota"} -> 201 {"id", "state"}
//     GET  /v1/businesses/{id}            the business, its grant and its quota now
//     POST /v1/businesses/{id}/approve    (and /reject, /revoke) -> 200 {"id", "state"}
//     POST /v1/businesses/{id}/tokens     a token for an approved business -> 201 {"token", "business"}
//   a business, with a token the back office issued it (model/sms/auth.h):
//     POST /v1/sms                        one message ("to": a number) or a bulk send ("to": [...]),
//                                         all or nothing; "send_at" schedules it, "resend_of" resends a
//                                         failed one -> 200 answered (a sync send's outcome, or a
//                                         duplicate), 202 pending, 4xx refused
//     GET  /v1/sms/{id}                   a message of its own, with its status history
//     GET  /v1/sms?biz_type=&biz_id=      the same, by its key
//     GET  /v1/quota                      its quota in this period
//     POST /v1/campaigns                  a marketing campaign to the directory's users its filter chooses
//   a provider, with its receipt secret (serve.providers[].receipt_secret):
//     POST /v1/receipts/{provider}        {"reference", "status": "delivered" | "undelivered"}
//   anyone: GET /healthz.
// Every refusal is a 4xx (or a 503 when the store failed) with {"error": reason}; docs/live.md is
// the reference.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "live/api_keys.h"
#include "live/http_server.h"
#include "live/sms/config.h"
#include "model/sms/backoffice.h"
#include "model/sms/node.h"

namespace relaysim::live::sms {

namespace model = relaysim::sms;

// The most recipients one bulk send may name.
inline constexpr std::size_t kMaxBulk = 1000;

class Api {
 public:
  Api(model::Node& node, model::BackOffice& office, model::Store& store, ApiKeys& keys, model::TokenCodec& codec,
      const Clock& clock, const std::vector<ProviderEndpoint>& providers);

  // Answers `in` through `respond`, at once or (a synchronous send) when its provider answers.
  void handle(const Incoming& in, Respond respond);
  // While draining, /healthz answers 503 and sends and campaigns are refused.
  void set_draining(bool draining) { draining_ = draining; }

 private:
  Response admin(const Incoming& in, std::string_view path);
  void business_call(const Incoming& in, std::string_view path, std::string_view query, Respond& respond);
  void send(const Incoming& in, std::string_view token, Respond& respond);
  Response campaign(const Incoming& in, std::string_view token);
  Response show(const model::AuthResult& who, std::string_view path, std::string_view query);
  Response receipt(const Incoming& in, std::string_view provider);

  model::Node& node_;
  model::BackOffice& office_;
  model::Store& store_;
  ApiKeys& keys_;
  model::Authorizer auth_;  // for queries; a send's token is checked by the node's Ingest
  const Clock& clock_;
  const std::vector<ProviderEndpoint>& providers_;
  bool draining_ = false;
};

}  // namespace relaysim::live::sms
