#include "live/webhook/world.h"

#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include <charconv>
#include <stdexcept>

#include "live/webhook/ports.h"
#include "model/core/assert.h"
#include "model/core/random.h"
#include "sim/webhook/load.h"
#include "sim/webhook/spec.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

namespace {

const sim::webhook::WebhookSpec& webhook_spec(const sim::Scenario& s) {
  const auto* w = dynamic_cast<const sim::webhook::WebhookSpec*>(&s.spec());
  if (w == nullptr) throw std::invalid_argument("not a webhook scenario");
  return *w;
}

std::optional<std::uint32_t> number_after(std::string_view text, std::string_view prefix, std::string_view& rest) {
  if (text.substr(0, prefix.size()) != prefix) return std::nullopt;
  text.remove_prefix(prefix.size());
  std::uint32_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end == text.data()) return std::nullopt;
  rest = text.substr(static_cast<std::size_t>(end - text.data()));
  return n;
}

}  // namespace

std::string live_url(std::string_view sim_url, std::string_view base) {
  constexpr std::string_view kScheme = "http://";
  const std::size_t host_end = sim_url.find(".sim/");
  RELAYSIM_ASSERT(sim_url.substr(0, kScheme.size()) == kScheme && host_end != std::string_view::npos, "a URL of the simulator's ServiceB");
  return std::string(base) + "/" + std::string(sim_url.substr(kScheme.size(), host_end - kScheme.size())) +
         std::string(sim_url.substr(host_end + 4));
}

std::string sim_url(std::string_view live_url, std::string_view base) {
  if (live_url.substr(0, base.size()) != base || live_url.substr(base.size(), 3) != "/ep") return std::string(live_url);
  const std::string_view rest = live_url.substr(base.size() + 1);  // ep3/hooks/cx7/v2
  const std::size_t host_end = rest.find('/');
  if (host_end == std::string_view::npos) return std::string(live_url);
  return "http://" + std::string(rest.substr(0, host_end)) + ".sim" + std::string(rest.substr(host_end));
}

WorldServer::WorldServer(boost::asio::io_context& io, const sim::Scenario& scenario, WorldOptions options)
    : io_(io),
      spec_(webhook_spec(scenario)),
      options_(std::move(options)),
      started_(clock_.now()),
      cxids_(spec_.cxid_count()),
      serviceb_(spec_.serviceb, cxids_, spec_.endpoint_count(), scenario.seed),
      endpoints_(spec_.endpoints, scenario.seed),
      key_(signing_key(options_.signing_secret, "--signing-secret")) {
  RELAYSIM_ASSERT(cxids_ > 0, "a world has cxids");
  serviceb_.install(kernel_);
  server_ = std::make_unique<HttpServer>(io, listen_endpoint(options_.listen, "--listen"),
                                         [this](const Incoming& in, Respond respond) { handle(in, std::move(respond)); });
  base_ = "http://" + url_host(listen_endpoint(options_.listen, "--listen")) + ":" + std::to_string(port());
  if (!options_.receipts.empty()) {
    receipts_.open(options_.receipts, std::ios::out | std::ios::app);
    if (!receipts_) throw std::invalid_argument("--receipts: cannot open " + options_.receipts + " for writing");
    // The first line says which world the receipts after it are of, where it serves and when its
    // clock started: `relaysim judge` reads the world's times and URLs from it.
    receipts_ << nlohmann::json{{"world", {{"scenario", scenario.name}, {"seed", scenario.seed}, {"base", base_},
                                           {"started_ns", to_ns(started_)}}}}
                     .dump()
              << '\n';
    receipts_.flush();
  }
}

WorldServer::~WorldServer() = default;

Time WorldServer::world_now() {
  const Time now = kTimeZero + (clock_.now() - started_);
  RELAYSIM_ASSERT(now >= kTimeZero, "the world's clock starts at zero and never goes back");
  kernel_.run_until(now);  // the URL changes due by now
  return now;
}

void WorldServer::later(Duration delay, Response response, Respond respond) {
  RELAYSIM_ASSERT(static_cast<bool>(respond), "a request has someone to answer it");
  if (delay <= Duration::zero()) {
    respond(std::move(response));
    return;
  }
  auto timer = std::make_shared<boost::asio::steady_timer>(io_);
  timer->expires_after(delay);
  timer->async_wait([timer, response = std::move(response), respond = std::move(respond)](const boost::system::error_code&) mutable {
    respond(std::move(response));
  });
}

void WorldServer::handle(const Incoming& in, Respond respond) {
  const std::string_view path = in.target.substr(0, in.target.find('?'));
  constexpr std::string_view kLookup = "/serviceb/v1/urls/";
  if (path == "/healthz" && in.method == "GET") return respond(Response{200, "application/json", "{\"status\":\"ok\"}\n", {}, false});
  if (path.substr(0, kLookup.size()) == kLookup && in.method == "GET") return lookup(path.substr(kLookup.size()), std::move(respond));
  if (path.substr(0, 3) == "/ep" && in.method == "POST") return deliver(in, path, std::move(respond));
  respond(error_response(404, "no such endpoint in this world: " + std::string(in.method) + " " + std::string(path)));
}

void WorldServer::lookup(std::string_view cxid, Respond respond) {
  const Time now = world_now();
  const std::int64_t index = sim::webhook::ServiceB::cxid_index(cxid);
  const auto c = index < 0 ? UINT32_MAX : static_cast<std::uint32_t>(index);
  const sim::webhook::ServiceB::Answer a = serviceb_.lookup(c, now, options_.hold);
  Response r;
  switch (a.status) {
    case sim::webhook::LookupStatus::found: {
      RELAYSIM_ASSERT(c < cxids_, "a URL is found only for a cxid of the world");
      const std::string url = live_url(sim::webhook::ServiceB::url(c, serviceb_.endpoint_of(c), a.version).view(), base_);
      r.body = nlohmann::json{{"url", url}, {"version", a.version}}.dump() + "\n";
      break;
    }
    case sim::webhook::LookupStatus::not_found: r = error_response(404, "ServiceB holds no URL for this cxid"); break;
    case sim::webhook::LookupStatus::error:
      r = error_response(503, "ServiceB failed");
      r.drop = a.latency >= options_.hold;  // an outage that times out: no answer at all
      break;
  }
  later(a.latency, std::move(r), std::move(respond));
}

void WorldServer::deliver(const Incoming& in, std::string_view path, Respond respond) {
  std::string_view rest;
  const std::optional<std::uint32_t> endpoint = number_after(path, "/ep", rest);
  if (!endpoint || *endpoint >= endpoints_.count()) {
    return respond(error_response(404, "no such endpoint in this world: " + std::string(path)));
  }
  // The rest is /hooks/{cxid}/v{version}, as the URL ServiceB handed out.
  const std::size_t v = rest.rfind("/v");
  std::string_view cxid = rest.substr(0, v);
  if (cxid.substr(0, 7) == "/hooks/") cxid.remove_prefix(7);
  std::uint64_t version = 0;
  if (v != std::string_view::npos) std::from_chars(rest.data() + v + 2, rest.data() + rest.size(), version);
  const Time now = world_now();
  Duration retry_after{-1};
  const sim::webhook::SendFate fate = endpoints_.send(*endpoint, now, options_.hold, retry_after);
  Response r;
  if (!fate.processed) {
    // Not processed: a DNS failure or a refused connection (closed at once), or a black hole.
    r.drop = true;
    return later(fate.client_error == NetError::timeout ? options_.hold : Duration::zero(), std::move(r), std::move(respond));
  }
  std::string signature = "unchecked";
  const std::string_view id = in.header(model::kWebhookIdHeader);
  if (key_) {
    const std::int64_t now_s = to_ns(clock_.now()) / 1'000'000'000;
    signature = std::string(to_string(model::verify(*key_, id, in.header(model::kWebhookTimestampHeader),
                                                      in.header(model::kWebhookSignatureHeader), in.body, now_s)));
    if (signature == "none") signature = "valid";
  }
  ++receipt_count_;
  if (receipts_.is_open()) {
    const std::uint32_t group = endpoints_.group_of(*endpoint);
    RELAYSIM_ASSERT(group < spec_.endpoints.size(), "an endpoint's group is one of the scenario's");
    const Time wall = clock_.now();
    nlohmann::json line{{"at", to_seconds(wall)},
                        {"at_ns", to_ns(wall)},
                        {"endpoint", *endpoint},
                        {"group", spec_.endpoints[group].name},
                        {"cxid", cxid},
                        {"version", version},
                        {"webhook_id", id},
                        {"status", fate.status},
                        {"answered", !fate.response_lost},
                        {"signature", signature},
                        {"target", in.target},
                        // What the payload is, for the judge: the load's key number in it, its digest.
                        {"key", sim::webhook::LoadGenerator::key_in(in.body)},
                        {"payload_digest", hash_bytes(in.body)}};
    receipts_ << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    receipts_.flush();
  }
  if (fate.response_lost) {
    r.drop = true;
    return later(options_.hold, std::move(r), std::move(respond));
  }
  r.status = fate.status;
  r.body = fate.status < 300 ? "{\"ok\":true}\n" : "{\"error\":\"simulated\"}\n";
  if (retry_after >= Duration::zero()) {
    r.headers.emplace_back("Retry-After", std::to_string(std::chrono::duration_cast<std::chrono::seconds>(retry_after).count()));
  }
  later(fate.result_at - now, std::move(r), std::move(respond));
}

}  // namespace relaysim::live::webhook
