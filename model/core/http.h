// HttpClient: the port through which a model calls HTTP endpoints (see model/core/ports.h for what
// every port promises).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "model/core/function.h"
#include "model/core/names.h"
#include "model/core/time.h"

namespace relaysim {

// What went wrong below HTTP. `none` means a status line arrived. `forbidden_address`: the URL
// resolves only to addresses the shell may not call (loopback, a private network, a cloud's
// metadata service: the live shell's guard against server-side request forgery); nothing was sent.
// `bad_url`: the URL is not one that can be called at all (credentials in it, a scheme other than
// http or https, a control character or space, no host, a bad port); nothing was sent.
// `too_late`: the request could not start by its `send_by` (HttpRequest); nothing was sent.
enum class NetError : std::uint8_t { none, timeout, connect_error, dns_error, forbidden_address, bad_url, too_late };

inline constexpr auto kNetErrorNames = names<NetError>({
    {NetError::none, "none"}, {NetError::timeout, "timeout"}, {NetError::connect_error, "connect_error"},
    {NetError::dns_error, "dns_error"}, {NetError::forbidden_address, "forbidden_address"},
    {NetError::bad_url, "bad_url"}, {NetError::too_late, "too_late"}});
constexpr std::string_view to_string(NetError e) { return kNetErrorNames[e]; }
inline constexpr int kNetErrorCount = kNetErrorNames.count;

struct HttpHeader {
  std::string_view name;
  std::string_view value;
};

struct HttpRequest {
  std::string_view url;
  std::span<const HttpHeader> headers;
  std::string_view payload;  // the body (JSON)
  std::string_view tenant;   // whose request this is (a webhook's cxid): a live client signs with its key
  // The latest moment the request may start: a webhook delivery's claim lease ends then, and
  // another pod may hold the request from then on. A client that holds requests back before
  // sending (the live one, while their claim's group commit is open) answers too_late, sending
  // nothing, when it could not start one in time. One that sends at once never meets it: the
  // dispatcher sends only before it.
  Time send_by = kTimeNever;

  // The value of the header `name` (exact, case-sensitive), or empty.
  std::string_view header(std::string_view name) const {
    for (const HttpHeader& h : headers) {
      if (h.name == name) return h.value;
    }
    return {};
  }
};

struct HttpResult {
  NetError error = NetError::none;
  int status = 0;                    // valid when error == none
  Duration retry_after{-1};          // parsed Retry-After header; negative when absent
  // Why nothing was sent, in words, for the attempt's record (forbidden_address: the address and
  // its kind; bad_url: what is wrong with it; too_late: that the lease ended while it waited);
  // empty otherwise. Valid during the callback only.
  std::string_view detail{};
};

using HttpCallback = InplaceFunction<void(const HttpResult&), 48>;

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // The request's views are valid only during the call.
  virtual void send(const HttpRequest& request, Duration timeout, HttpCallback done) = 0;
};

}  // namespace relaysim
