#include "live/webhook/ports.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <memory>
#include <ctime>
#include <iostream>
#include <charconv>
#include <stdexcept>
#include <utility>
#include <vector>

#include "live/webhook/event_log.h"
#include "model/core/assert.h"
#include "model/webhook/types.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

std::optional<Duration> parse_retry_after(std::string_view text, Time now) {
  std::uint32_t seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (!text.empty() && ec == std::errc{} && end == text.data() + text.size()) return std::chrono::seconds(seconds);
  // The IMF-fixdate form, the only one a sender may generate.
  std::tm tm{};
  const std::string date(text.substr(0, 64));
  const char* rest = strptime(date.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (rest == nullptr || *rest != '\0') return std::nullopt;
  const Duration at = std::chrono::seconds(timegm(&tm));
  return std::max(Duration::zero(), at - now.time_since_epoch());
}

std::string not_sent_line(const model::AttemptFinished& e) {
  if (e.result.detail.empty()) return {};
  // The URL and the reason (which quotes the URL's parts) are the tenant's text: written as JSON
  // strings, so that no character of theirs can end the line or forge another.
  const nlohmann::json what{{"request", e.attempt.request},
                            {"attempt", e.attempt.number},
                            {"url", e.attempt.resolved_url},
                            {"error", to_string(e.result.error)},
                            {"detail", e.result.detail}};
  return "relaysim serve: not sent: " + what.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

std::optional<model::SigningKey> signing_key(const std::string& secret, std::string_view what) {
  if (secret.empty()) return std::nullopt;
  std::optional<model::SigningKey> key = model::SigningKey::parse(secret);
  if (!key) throw std::invalid_argument(std::string(what) + ": not a key (whsec_ followed by base64 of 24 to 64 bytes)");
  return key;
}

const model::SigningKey* DeliveryClient::key_for(std::string_view tenant) const {
  if (!tenants_.empty()) {
    if (const auto it = tenants_.find(std::string(tenant)); it != tenants_.end()) return &it->second;
  }
  return key_ ? &*key_ : nullptr;
}

void DeliveryClient::send(const HttpRequest& request, Duration timeout, HttpCallback done) {
  RELAYSIM_ASSERT(timeout > Duration::zero() && static_cast<bool>(done), "a delivery has a timeout and someone to answer");
  if (commits_ == nullptr || !commits_->group_open()) {
    send_now(request, timeout, std::move(done));
    return;
  }
  // The request names memory that lives only through this call: the held delivery keeps copies.
  struct Held {
    std::string url, payload, tenant;
    std::vector<std::pair<std::string, std::string>> headers;
    Time send_by;
    Duration timeout;
    HttpCallback done;
  };
  auto held = std::make_shared<Held>(Held{std::string(request.url), std::string(request.payload), std::string(request.tenant),
                                          {}, request.send_by, timeout, std::move(done)});
  for (const HttpHeader& h : request.headers) held->headers.emplace_back(h.name, h.value);
  commits_->when_committed([this, held](bool committed) {
    // Not committed: the process stops (Db::commit_group), and the claim was never made.
    if (!committed) return;
    // A commit slower than the rest of the claim's lease (a stalled disk): another pod may have
    // claimed the request since, and sending now could put two deliveries of it in flight.
    if (clock_.now() >= held->send_by) {
      HttpResult late;
      late.error = NetError::too_late;
      late.detail = "not sent: its claim's lease ended while it waited for its group commit";
      held->done(late);
      return;
    }
    std::vector<HttpHeader> headers;
    headers.reserve(held->headers.size());
    for (const auto& [name, value] : held->headers) headers.push_back({name, value});
    send_now(HttpRequest{held->url, headers, held->payload, held->tenant, held->send_by}, held->timeout,
             std::move(held->done));
  });
}

bool LoggedNotices::out(const model::Notice& n) const {
  if (log_ != nullptr) return log_->intact();
  std::cerr << "relaysim serve: notice to the tenant of request " << n.request << ": " << model::to_string(n.status) << " ("
            << model::to_string(n.reason) << ")" << (n.sends > 1 ? ", sent again" : "") << std::endl;
  return true;
}

void LoggedNotices::tell(const model::Notice& notice, model::NoticeCallback done) {
  if (commits_ == nullptr || !commits_->group_open()) {
    done(out(notice));
    return;
  }
  auto held = std::make_shared<model::NoticeCallback>(std::move(done));
  commits_->when_committed([this, held, notice](bool committed) { (*held)(committed && out(notice)); });
}

void DeliveryClient::send_now(const HttpRequest& request, Duration timeout, HttpCallback done) {
  std::vector<OutgoingHeader> headers;
  headers.reserve(request.headers.size() + 2);
  for (const HttpHeader& h : request.headers) headers.push_back({h.name, h.value});
  std::string timestamp;
  std::string signature;
  if (const model::SigningKey* key = key_for(request.tenant)) {
    const std::int64_t now_s = to_ns(clock_.now()) / 1'000'000'000;
    timestamp = std::to_string(now_s);
    signature = model::sign(*key, request.header(model::kWebhookIdHeader), now_s, request.payload);
    headers.push_back({model::kWebhookTimestampHeader, timestamp});
    headers.push_back({model::kWebhookSignatureHeader, signature});
  }
  caller_.call("POST", request.url, headers, request.payload, timeout,
               [this, done = std::move(done)](HttpReply&& reply) mutable {
    HttpResult result;
    result.error = reply.refused ? NetError::forbidden_address : reply.error;
    result.status = reply.status;
    // Nothing was sent, and never will be to this URL: the attempt's record says why.
    if (result.error == NetError::forbidden_address || result.error == NetError::bad_url) result.detail = reply.problem;
    if (reply.error == NetError::none && !reply.retry_after.empty()) {
      result.retry_after = parse_retry_after(reply.retry_after, clock_.now()).value_or(Duration{-1});
    }
    done(result);
  });
}

void HttpDirectory::lookup(std::string_view cxid, Duration timeout, model::LookupCallback done) {
  RELAYSIM_ASSERT(timeout > Duration::zero() && static_cast<bool>(done), "a lookup has a timeout and someone to answer");
  std::string url = base_ + "/v1/urls/";
  // The cxid goes into a path segment: everything but unreserved characters is percent-encoded.
  for (const char c : cxid) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      url += c;
    } else {
      constexpr char kHex[] = "0123456789ABCDEF";
      url += '%';
      url += kHex[u >> 4];
      url += kHex[u & 15];
    }
  }
  caller_.call("GET", url, {}, {}, timeout, [done = std::move(done)](HttpReply&& reply) mutable {
    model::LookupResult result;
    result.status = model::LookupStatus::error;
    std::string held;
    if (reply.error == NetError::none && reply.status == 404) {
      result.status = model::LookupStatus::not_found;
    } else if (reply.error == NetError::none && reply.status == 200) {
      const nlohmann::json body = nlohmann::json::parse(reply.body, nullptr, false);
      if (body.is_object() && body.contains("url") && body["url"].is_string() && body.contains("version") &&
          body["version"].is_number_unsigned()) {
        held = body["url"].get<std::string>();
        result.status = model::LookupStatus::found;
        result.url = held;
        result.version = body["version"].get<std::uint64_t>();
      }
    }
    done(result);
  });
}

}  // namespace relaysim::live::webhook
