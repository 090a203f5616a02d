// HttpCaller: one HTTP/1.1 exchange on Beast, with a deadline over the whole of it (name lookup,
// connect, write, read), and a guard on the addresses it may connect to.
//
// The ports that call out (the delivery client, the ServiceB directory) are built on it. An https
// URL is called over TLS 1.2 or later (OpenSSL), and the server's certificate must chain to an
// authority the system trusts (or `ca_file` names) and be valid for the URL's host; a handshake
// that fails is a connect error.
//
// Connections are kept open after an answer that allows it (HTTP/1.1 keep-alive), one pool per
// caller keyed by scheme, host and port, and the next call to the same place takes the most
// recently used one instead of resolving, connecting and shaking hands again. Bounded: at most
// kMaxIdlePerPlace idle connections to one place and kMaxIdle in all, each closed after `idle`
// unused. A pooled connection the server has closed meanwhile is noticed before use (it reads as
// closed) and dropped. One that fails after the request was written is "no answer", as on a new
// connection: the server may have acted on it, so it is never sent again at once (the retry policy
// decides).
//
// The address guard is the live shell's defence against server-side request forgery: a URL held
// in ServiceB is the tenant's to choose, and must not make the platform call its own loopback,
// private network or a cloud's metadata address. The name is resolved first and every address it
// resolves to is checked; a URL whose addresses are all refused is not called at all.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "model/core/function.h"
#include "model/core/http.h"
#include "model/core/names.h"
#include "model/core/time.h"

namespace relaysim::live {

struct Url {
  std::string scheme;  // "http" or "https"
  std::string host;    // a name, an IPv4 address, or an IPv6 address without its brackets
  std::string port;    // "80" when not written
  std::string target;  // the path and query, "/" when not written
};
// Parses an absolute http(s) URL; nullopt, with `problem` set, when it is not one.
std::optional<Url> parse_url(std::string_view text, std::string& problem);

// The kinds of address the guard tells apart.
enum class AddressKind : std::uint8_t { global, loopback, private_network, link_local, other_reserved };
inline constexpr auto kAddressKindNames = names<AddressKind>({
    {AddressKind::global, "global"}, {AddressKind::loopback, "loopback"},
    {AddressKind::private_network, "private-network"}, {AddressKind::link_local, "link-local"},
    {AddressKind::other_reserved, "reserved"}});
constexpr std::string_view to_string(AddressKind k) { return kAddressKindNames[k]; }
// `text` is a numeric IPv4 or IPv6 address; nullopt when it is not one.
std::optional<AddressKind> address_kind(std::string_view text);

// Which non-global addresses calls may reach. Global addresses are always allowed; the reserved
// rest (unspecified, multicast, broadcast, documentation) never.
struct AddressPolicy {
  bool loopback = false;
  bool private_network = false;
  bool link_local = false;  // 169.254.0.0/16 holds the clouds' metadata service
  bool allows(AddressKind k) const;
};

struct HttpReply {
  NetError error = NetError::none;
  int status = 0;
  std::string retry_after;  // the header as sent, or empty
  std::string body;         // at most kMaxReplyBody bytes are read
  // Why it failed, in words: "10.0.0.7 is a private-network address, which allow_addresses does
  // not admit" (refused), "credentials in a URL are not accepted" (bad_url), "timed out".
  std::string problem;
  bool refused = false;     // the guard refused every address of the URL
};

inline constexpr std::size_t kMaxReplyBody = 64 * 1024;

struct OutgoingHeader {
  std::string_view name;
  std::string_view value;
};

class ConnectionPool;  // live/http_call.cpp

class HttpCaller {
 public:
  using Done = InplaceFunction<void(HttpReply&&), 96>;
  static constexpr std::size_t kMaxIdlePerPlace = 64;
  static constexpr std::size_t kMaxIdle = 512;
  // Throws boost::system::system_error when `ca_file` cannot be read. `idle`: how long an idle
  // connection is kept for the next call; zero: none is, every call has a connection of its own.
  HttpCaller(boost::asio::io_context& io, AddressPolicy policy, const std::string& ca_file = {},
             Duration idle = std::chrono::seconds(1));
  ~HttpCaller();
  HttpCaller(const HttpCaller&) = delete;
  HttpCaller& operator=(const HttpCaller&) = delete;

  // Sends `method` (GET or POST) to `url`; `done` runs on the loop, never inline, exactly once.
  // The views are copied before the call returns.
  void call(std::string_view method, std::string_view url, std::span<const OutgoingHeader> headers,
            std::string_view body, Duration timeout, Done done);

 private:
  boost::asio::io_context& io_;
  AddressPolicy policy_;
  boost::asio::ssl::context tls_;
  std::shared_ptr<ConnectionPool> pool_;  // shared with the calls under way
};

}  // namespace relaysim::live
