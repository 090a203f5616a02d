#include "live/sms/world.h"

#include "live/sms/directory.h"

#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include <stdexcept>

#include "live/json_api.h"
#include "model/core/assert.h"

namespace relaysim::live::sms {

namespace {

const sim::sms::SmsSpec& sms_spec(const sim::Scenario& s) {
  const auto* spec = dynamic_cast<const sim::sms::SmsSpec*>(&s.spec());
  if (spec == nullptr) throw std::invalid_argument("not an SMS scenario");
  return *spec;
}

// The status a provider answers for each fate that is answered at all.
int status_of(sim::sms::Fate fate) {
  switch (fate) {
    case sim::sms::Fate::accepted:
    case sim::sms::Fate::late: return 202;
    case sim::sms::Fate::throttled: return 429;
    case sim::sms::Fate::unavailable: return 503;
    case sim::sms::Fate::refused: return 400;
    case sim::sms::Fate::answer_lost:
    case sim::sms::Fate::swallowed: return 0;
  }
  return 0;
}

constexpr int kReceiptTries = 60;

}  // namespace

SmsWorldServer::SmsWorldServer(boost::asio::io_context& io, const sim::Scenario& scenario, SmsWorldOptions options)
    : io_(io),
      spec_(sms_spec(scenario)),
      options_(std::move(options)),
      started_(clock_.now()),
      providers_(spec_.providers, scenario.seed),
      // The gateway is the operator's own: no address guard.
      caller_(io, AddressPolicy{true, true, true}, {}, std::chrono::seconds(1)) {
  for (const sim::sms::ProviderSpec& p : spec_.providers) {
    const ProviderEndpoint* found = nullptr;
    for (const ProviderEndpoint& e : options_.providers) {
      if (e.name == p.name) found = &e;
    }
    if (found == nullptr) {
      throw std::invalid_argument("the scenario's provider '" + p.name +
                                  "' is not among the gateway's (serve.providers): its receipts would have no secret");
    }
    endpoints_.push_back(found);
  }
  if (!options_.directory.empty()) {
    // The scenario's users, as the simulator draws them from its seed, from the run's epoch.
    const sim::sms::SimDirectory directory(spec_.directory, scenario.seed);
    write_directory(options_.directory, directory, run_epoch(started_, options_.platform, options_.business));
  }
  if (!options_.receipts.empty()) {
    receipts_.open(options_.receipts, std::ios::out | std::ios::app);
    if (!receipts_) throw std::invalid_argument("--receipts: cannot open " + options_.receipts + " for writing");
    receipts_ << dump_json(nlohmann::json{{"world", {{"scenario", scenario.name}, {"seed", scenario.seed},
                                                     {"system", "sms"}, {"started_ns", to_ns(started_)},
                                                     {"epoch_ns", to_ns(run_epoch(started_, options_.platform, options_.business))}}}});
    receipts_.flush();
  }
  server_ = std::make_unique<HttpServer>(io, listen_endpoint(options_.listen, "--listen"),
                                         [this](const Incoming& in, Respond respond) { handle(in, std::move(respond)); });
}

SmsWorldServer::~SmsWorldServer() = default;

void SmsWorldServer::handle(const Incoming& in, Respond respond) {
  const std::string_view path = in.target.substr(0, in.target.find('?'));
  if (path == "/healthz") return respond(json_response(200, nlohmann::json{{"status", "ok"}}));
  constexpr std::string_view kPrefix = "/providers/";
  constexpr std::string_view kSuffix = "/submit";
  if (path.starts_with(kPrefix) && path.ends_with(kSuffix) && path.size() > kPrefix.size() + kSuffix.size()) {
    const std::string_view name = path.substr(kPrefix.size(), path.size() - kPrefix.size() - kSuffix.size());
    for (std::size_t i = 0; i < spec_.providers.size(); ++i) {
      if (spec_.providers[i].name == name) {
        if (in.method != "POST") return respond(method_not_allowed("POST"));
        return submit(i, in, std::move(respond));
      }
    }
  }
  respond(error_response(404, "no such provider in this world: " + std::string(path).substr(0, 200)));
}

void SmsWorldServer::submit(std::size_t provider, const Incoming& in, Respond respond) {
  nlohmann::json body;
  if (std::optional<Response> refused = read_json_body(in, body)) return respond(std::move(*refused));
  if (!body.is_object() || !body.contains("reference") || !body["reference"].is_string() ||
      !whole_number(body["reference"].get_ref<const std::string&>())) {
    return respond(error_response(400, "a submit carries its message's \"reference\" (docs/live.md)"));
  }
  std::string reference = body["reference"].get<std::string>();
  const Time now = kTimeZero + (clock_.now() - started_);
  // The world holds an unanswered submit for `hold`: the gateway's own timeout is shorter.
  const sim::sms::ProviderAnswer a = providers_.submit(static_cast<relaysim::sms::ProviderId>(provider), now, options_.hold);
  ++submits_;
  if (receipts_.is_open()) {
    nlohmann::json line{{"at_ns", to_ns(now)},
                        {"provider", spec_.providers[provider].name},
                        {"reference", reference},
                        {"attempt", body.contains("attempt") ? body["attempt"] : nlohmann::json(nullptr)},
                        {"fate", to_string(a.fate)}};
    if (a.receipt) {
      line["receipt_at_ns"] = to_ns(a.receipt_at);
      line["delivered"] = a.delivered;
    }
    receipts_ << dump_json(line);
    receipts_.flush();
  }
  const int status = status_of(a.fate);
  const Duration answer_in = a.answer_at - now;
  if (status == 0) {
    Response dropped;
    dropped.drop = true;
    run_after(io_, answer_in, [respond = std::move(respond), dropped = std::move(dropped)]() mutable {
      respond(std::move(dropped));
    });
  } else {
    Response r = status == 202 ? json_response(202, nlohmann::json{{"reference", reference}, {"accepted", true}})
                               : error_response(status, std::string("the provider says ") + std::string(to_string(a.fate)));
    run_after(io_, a.fate == sim::sms::Fate::late ? options_.hold : answer_in,
              [respond = std::move(respond), r = std::move(r)]() mutable { respond(std::move(r)); });
  }
  if (a.receipt) {
    run_after(io_, a.receipt_at - now,
              [this, provider, reference = std::move(reference), delivered = a.delivered]() mutable {
                post_receipt(provider, std::move(reference), delivered, kReceiptTries);
              });
  }
}

void SmsWorldServer::post_receipt(std::size_t provider, std::string reference, bool delivered, int tries_left) {
  const ProviderEndpoint& e = *endpoints_[provider];
  const std::string url = options_.gateway + "/v1/receipts/" + e.name;
  const std::string authorization = "Bearer " + e.receipt_secret;
  const OutgoingHeader headers[] = {{"Content-Type", "application/json"}, {"Authorization", authorization}};
  const std::string body =
      dump_json(nlohmann::json{{"reference", reference}, {"status", delivered ? "delivered" : "undelivered"}});
  caller_.call("POST", url, headers, body, std::chrono::seconds(5),
               [this, provider, reference, delivered, tries_left](HttpReply&& reply) mutable {
                 const bool taken = reply.error == NetError::none && reply.status >= 200 && reply.status < 500;
                 if (taken || tries_left <= 1) return;
                 run_after(io_, std::chrono::seconds(1),
                           [this, provider, reference = std::move(reference), delivered, tries_left]() mutable {
                             post_receipt(provider, std::move(reference), delivered, tries_left - 1);
                           });
               });
}

}  // namespace relaysim::live::sms
