#include "live/http_call.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <deque>
#include <unordered_map>
#include <array>
#include <charconv>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "model/core/assert.h"

namespace relaysim::live {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// The host and the port (empty when not written) of a URL's authority, into `u.host` and `port`;
// false, with `problem` saying why, when they cannot be a host and port.
bool read_authority(std::string_view authority, Url& u, std::string_view& port, std::string& problem) {
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      problem = "an IPv6 address without its closing ']'";
      return false;
    }
    u.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        problem = "text after the IPv6 address";
        return false;
      }
      port = after.substr(1);
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (u.host.empty()) {
    problem = "no host";
    return false;
  }
  for (const char c : u.host) {
    if (c <= ' ' || c == '/' || c == '\\' || c == '%' || c == '[' || c == ']' || static_cast<unsigned char>(c) >= 0x7f) {
      problem = "the host has a character a host name cannot have";
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<Url> parse_url(std::string_view text, std::string& problem) {
  Url u;
  const std::size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) {
    problem = "not an absolute URL (no scheme://)";
    return std::nullopt;
  }
  u.scheme = std::string(text.substr(0, scheme_end));
  if (u.scheme != "http" && u.scheme != "https") {
    problem = "the scheme '" + u.scheme + "' is not http or https";
    return std::nullopt;
  }
  std::string_view rest = text.substr(scheme_end + 3);
  const std::size_t path_start = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, path_start);
  std::string_view target = path_start == std::string_view::npos ? std::string_view{} : rest.substr(path_start);
  if (const std::size_t hash = target.find('#'); hash != std::string_view::npos) target = target.substr(0, hash);
  if (authority.find('@') != std::string_view::npos) {
    problem = "credentials in a URL are not accepted";
    return std::nullopt;
  }
  std::string_view port;
  if (!read_authority(authority, u, port, problem)) return std::nullopt;
  if (port.empty()) {
    u.port = u.scheme == "https" ? "443" : "80";
  } else {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
      problem = "the port '" + std::string(port) + "' is not a number from 1 to 65535";
      return std::nullopt;
    }
    u.port = std::string(port);
  }
  u.target = target.empty() ? "/" : (target.front() == '?' ? "/" + std::string(target) : std::string(target));
  for (const char c : u.target) {
    if (c <= ' ' || static_cast<unsigned char>(c) >= 0x7f) {
      problem = "the path has a space or a control character";
      return std::nullopt;
    }
  }
  return u;
}

bool AddressPolicy::allows(AddressKind k) const {
  switch (k) {
    case AddressKind::global: return true;
    case AddressKind::loopback: return loopback;
    case AddressKind::private_network: return private_network;
    case AddressKind::link_local: return link_local;
    case AddressKind::other_reserved: return false;
  }
  return false;
}

namespace {

AddressKind kind_of_v4(std::uint32_t a) {
  const auto in = [a](std::uint32_t net, int bits) { return (a >> (32 - bits)) == (net >> (32 - bits)); };
  if (in(0x7f000000, 8)) return AddressKind::loopback;
  if (in(0x0a000000, 8) || in(0xac100000, 12) || in(0xc0a80000, 16) || in(0x64400000, 10)) {
    return AddressKind::private_network;  // RFC 1918, and carrier-grade NAT (RFC 6598)
  }
  if (in(0xa9fe0000, 16)) return AddressKind::link_local;
  // "This network", IETF protocol assignments, the documentation and benchmarking ranges,
  // multicast and the reserved rest.
  if (in(0x00000000, 8) || in(0xc0000000, 24) || in(0xc0000200, 24) || in(0xc6120000, 15) || in(0xc6336400, 24) ||
      in(0xcb007100, 24) || in(0xe0000000, 4) || in(0xf0000000, 4)) {
    return AddressKind::other_reserved;
  }
  return AddressKind::global;
}

AddressKind kind_of(const asio::ip::address& address) {
  if (address.is_v4()) return kind_of_v4(address.to_v4().to_uint());
  const asio::ip::address_v6 v6 = address.to_v6();
  const std::array<unsigned char, 16> b = v6.to_bytes();
  if (v6.is_v4_mapped()) return kind_of(asio::ip::make_address_v4(asio::ip::v4_mapped, v6));
  // NAT64 (64:ff9b::/96) reaches the IPv4 address in its last four bytes.
  if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b &&
      std::all_of(b.begin() + 4, b.begin() + 12, [](unsigned char c) { return c == 0; })) {
    return kind_of_v4(std::uint32_t{b[12]} << 24 | std::uint32_t{b[13]} << 16 | std::uint32_t{b[14]} << 8 | b[15]);
  }
  if (v6.is_loopback()) return AddressKind::loopback;
  if (v6.is_link_local()) return AddressKind::link_local;
  if ((b[0] & 0xfe) == 0xfc) return AddressKind::private_network;  // unique local, fc00::/7
  if (v6.is_unspecified() || v6.is_multicast() || v6.is_site_local() ||
      std::all_of(b.begin(), b.begin() + 12, [](unsigned char c) { return c == 0; }) ||  // IPv4-compatible, deprecated
      (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)) {  // documentation, 2001:db8::/32
    return AddressKind::other_reserved;
  }
  return AddressKind::global;
}

}  // namespace

// A connection: the socket, wrapped in TLS for https (the socket then lives in the stream).
struct Connection {
  explicit Connection(asio::io_context& io) : socket(io) {}
  tcp::socket socket;
  std::optional<asio::ssl::stream<tcp::socket>> tls;
  std::chrono::steady_clock::time_point idle_since{};
  tcp::socket& raw() { return tls ? tls->next_layer() : socket; }
  void close() {
    error_code ignored;
    raw().shutdown(tcp::socket::shutdown_both, ignored);
    raw().close(ignored);
  }
};

// Idle connections by place ("scheme://host:port"), most recently used last.
class ConnectionPool : public std::enable_shared_from_this<ConnectionPool> {
 public:
  ConnectionPool(asio::io_context& io, Duration idle) : sweeper_(io), idle_(idle) {}

  bool enabled() const { return idle_ > Duration::zero(); }

  // The most recently used idle connection to `place` that is still open, if any.
  std::unique_ptr<Connection> take(const std::string& place) {
    const auto it = idle_by_place_.find(place);
    if (it == idle_by_place_.end()) return nullptr;
    std::deque<std::unique_ptr<Connection>>& idle = it->second;
    while (!idle.empty()) {
      std::unique_ptr<Connection> c = std::move(idle.back());
      idle.pop_back();
      --count_;
      if (still_open(*c) && !expired(*c, std::chrono::steady_clock::now())) return c;
      c->close();
    }
    return nullptr;
  }

  // Keeps `c`, done with, for the next call to `place` (or closes it, past the bounds).
  void put(const std::string& place, std::unique_ptr<Connection> c) {
    RELAYSIM_ASSERT(c != nullptr && enabled(), "a connection kept in a pool that keeps them");
    std::deque<std::unique_ptr<Connection>>& idle = idle_by_place_[place];
    if (idle.size() >= HttpCaller::kMaxIdlePerPlace || count_ >= HttpCaller::kMaxIdle) {
      c->close();
      return;
    }
    c->idle_since = std::chrono::steady_clock::now();
    idle.push_back(std::move(c));
    ++count_;
    if (!sweeping_) sweep_later();
  }

  void close_all() {
    for (auto& [place, idle] : idle_by_place_) {
      for (std::unique_ptr<Connection>& c : idle) c->close();
    }
    idle_by_place_.clear();
    count_ = 0;
    sweeper_.cancel();
  }

 private:
  bool expired(const Connection& c, std::chrono::steady_clock::time_point now) const { return now - c.idle_since >= idle_; }

  // An idle connection reads as nothing yet; one the server closed reads as its end (or as data
  // no request asked for): either way it cannot carry another exchange.
  static bool still_open(Connection& c) {
    char byte;
    const ssize_t n = ::recv(c.raw().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  // Closes each connection once it has been idle for `idle_`, so that an idle place holds no
  // sockets: wakes when the one idle longest expires.
  void sweep_later() {
    sweeping_ = true;
    auto oldest = std::chrono::steady_clock::time_point::max();
    for (const auto& [place, idle] : idle_by_place_) {
      if (!idle.empty()) oldest = std::min(oldest, idle.front()->idle_since);
    }
    RELAYSIM_ASSERT(oldest != std::chrono::steady_clock::time_point::max(), "a sweep is for connections kept");
    sweeper_.expires_at(oldest + std::chrono::duration_cast<std::chrono::steady_clock::duration>(idle_));
    sweeper_.async_wait([weak = weak_from_this()](const error_code& ec) {
      const std::shared_ptr<ConnectionPool> self = weak.lock();
      if (ec || !self) return;
      self->sweeping_ = false;
      const auto now = std::chrono::steady_clock::now();
      for (auto it = self->idle_by_place_.begin(); it != self->idle_by_place_.end();) {
        std::deque<std::unique_ptr<Connection>>& idle = it->second;
        while (!idle.empty() && self->expired(*idle.front(), now)) {
          idle.front()->close();
          idle.pop_front();
          --self->count_;
        }
        it = idle.empty() ? self->idle_by_place_.erase(it) : std::next(it);
      }
      if (self->count_ > 0) self->sweep_later();
    });
  }

  asio::steady_timer sweeper_;
  Duration idle_;
  bool sweeping_ = false;
  std::size_t count_ = 0;
  std::unordered_map<std::string, std::deque<std::unique_ptr<Connection>>> idle_by_place_;
};

namespace {

// One exchange. It owns everything the operations use and lives until the last of them ends.
class Call : public std::enable_shared_from_this<Call> {
 public:
  Call(asio::io_context& io, AddressPolicy policy, asio::ssl::context* tls, Url url, HttpCaller::Done done,
       std::shared_ptr<ConnectionPool> pool)
      : resolver_(io),
        deadline_(io),
        policy_(policy),
        tls_context_(tls),
        url_(std::move(url)),
        place_(url_.scheme + "://" + url_.host + ":" + url_.port),
        done_(std::move(done)),
        pool_(std::move(pool)),
        conn_(pool_->enabled() ? pool_->take(place_) : nullptr) {
    reused_ = conn_ != nullptr;
    if (!conn_) conn_ = std::make_unique<Connection>(io);
  }

  http::request<http::string_body>& request() { return request_; }

  void start(Duration timeout) {
    auto self = shared_from_this();
    deadline_.expires_after(timeout);
    deadline_.async_wait([self](const error_code& ec) {
      if (ec || self->finished_) return;
      self->timed_out_ = true;
      self->resolver_.cancel();
      error_code ignored;
      self->socket().cancel(ignored);
    });
    if (reused_) {
      if (conn_->tls) return exchange(*conn_->tls);
      return exchange(conn_->socket);
    }
    resolver_.async_resolve(url_.host, url_.port, [self](const error_code& ec, const tcp::resolver::results_type& r) {
      self->on_resolved(ec, r);
    });
  }

 private:
  void fail(NetError error, std::string problem, bool refused = false) {
    HttpReply reply;
    reply.error = timed_out_ ? NetError::timeout : error;
    reply.problem = timed_out_ ? "timed out" : std::move(problem);
    reply.refused = refused && !timed_out_;
    finish(std::move(reply));
  }
  // `reusable`: the exchange ended cleanly and the server keeps the connection open.
  void finish(HttpReply&& reply, bool reusable = false) {
    if (finished_) return;
    RELAYSIM_ASSERT(static_cast<bool>(done_), "an unfinished call has someone to answer");
    finished_ = true;
    deadline_.cancel();
    if (reusable && pool_->enabled()) {
      pool_->put(place_, std::move(conn_));
    } else {
      conn_->close();
    }
    HttpCaller::Done done = std::move(done_);
    done(std::move(reply));
  }

  void on_resolved(const error_code& ec, const tcp::resolver::results_type& results) {
    if (timed_out_ || ec) return fail(NetError::dns_error, "cannot resolve " + url_.host + ": " + ec.message());
    std::string refused;
    for (const auto& entry : results) {
      const asio::ip::address a = entry.endpoint().address();
      const AddressKind k = kind_of(a);
      if (policy_.allows(k)) {
        endpoints_.push_back(entry.endpoint());
      } else if (refused.empty()) {
        refused = a.to_string() + " is a " + std::string(to_string(k)) + " address" +
                  (k == AddressKind::other_reserved ? ", never called" : ", which allow_addresses does not admit");
      }
    }
    if (endpoints_.empty()) return fail(NetError::connect_error, refused, true);
    auto self = shared_from_this();
    asio::async_connect(conn_->socket, endpoints_, [self](const error_code& e, const tcp::endpoint&) {
      if (self->timed_out_ || e) return self->fail(NetError::connect_error, "cannot connect: " + e.message());
      if (self->tls_context_ == nullptr) return self->exchange(self->conn_->socket);
      self->handshake();
    });
  }

  // TLS: the server's certificate must chain to a trusted authority and name the URL's host
  // (SNI tells the server which host that is).
  void handshake() {
    RELAYSIM_ASSERT(tls_context_ != nullptr, "a TLS handshake has its context");
    std::optional<asio::ssl::stream<tcp::socket>>& tls = conn_->tls;
    tls.emplace(std::move(conn_->socket), *tls_context_);
    // SSL_set_tlsext_host_name, without its macro's C cast.
    SSL_ctrl(tls->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(url_.host.c_str()));
    tls->set_verify_mode(asio::ssl::verify_peer);
    tls->set_verify_callback(asio::ssl::host_name_verification(url_.host));
    tls->async_handshake(asio::ssl::stream_base::client, [self = shared_from_this()](const error_code& e) {
      if (self->timed_out_ || e) return self->fail(NetError::connect_error, "TLS handshake failed: " + e.message());
      self->exchange(*self->conn_->tls);
    });
  }

  template <class Stream>
  void exchange(Stream& stream) {
    auto self = shared_from_this();
    http::async_write(stream, request_, [self, &stream](const error_code& w, std::size_t) {
      // Once any of the request has gone, the endpoint may have acted on it: whatever goes wrong
      // from here is "no answer", as a timeout is, never "not sent".
      if (self->timed_out_ || w) return self->fail(NetError::timeout, "no answer: " + w.message());
      self->read_answer(stream);
    });
  }

  template <class Stream>
  void read_answer(Stream& stream) {
    parser_.emplace();
    parser_->body_limit(kMaxReplyBody);
    http::async_read(stream, buffer_, *parser_, [self = shared_from_this(), &stream](const error_code& r, std::size_t) {
      self->on_read(stream, r);
    });
  }

  template <class Stream>
  void on_read(Stream& stream, const error_code& ec) {
    RELAYSIM_ASSERT(parser_.has_value(), "a read has its parser");
    // A reply whose body was too long still has its status line: that is the answer.
    if (timed_out_ || (ec && !(ec == http::error::body_limit && parser_->is_header_done()))) {
      return fail(NetError::timeout, "no answer: " + ec.message());
    }
    // An interim answer (100 Continue, sent unasked by some servers) is not the answer: read on.
    const unsigned interim = parser_->get().result_int();
    if (!ec && interim >= 100 && interim < 200 && interim != 101) return read_answer(stream);
    const auto& message = parser_->get();
    HttpReply reply;
    reply.status = static_cast<int>(message.result_int());
    if (const auto it = message.find(http::field::retry_after); it != message.end()) {
      reply.retry_after = std::string(it->value());
    }
    if (!ec) reply.body = message.body();
    // Kept for the next call only when the whole answer was read, nothing follows it, and the
    // server keeps the connection open (101 hands it to another protocol).
    finish(std::move(reply), !ec && parser_->is_done() && parser_->keep_alive() && buffer_.size() == 0 &&
                                 reply.status >= 200);
  }

  tcp::socket& socket() { return conn_->raw(); }

  tcp::resolver resolver_;
  asio::steady_timer deadline_;
  AddressPolicy policy_;
  asio::ssl::context* tls_context_;  // for https; nullptr for http
  Url url_;
  std::string place_;  // the pool's key
  HttpCaller::Done done_;
  std::shared_ptr<ConnectionPool> pool_;
  std::unique_ptr<Connection> conn_;
  bool reused_ = false;  // taken from the pool: resolved, connected and checked before
  http::request<http::string_body> request_;
  std::vector<tcp::endpoint> endpoints_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::string_body>> parser_;
  bool timed_out_ = false;
  bool finished_ = false;
};

}  // namespace

HttpCaller::HttpCaller(asio::io_context& io, AddressPolicy policy, const std::string& ca_file, Duration idle)
    : io_(io), policy_(policy), tls_(asio::ssl::context::tls_client), pool_(std::make_shared<ConnectionPool>(io, idle)) {
  tls_.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                   asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
  // The system's authorities, and the operator's own when given (a private CA, a test's).
  tls_.set_default_verify_paths();
  if (!ca_file.empty()) tls_.load_verify_file(ca_file);
}

HttpCaller::~HttpCaller() { pool_->close_all(); }

std::optional<AddressKind> address_kind(std::string_view text) {
  error_code ec;
  const asio::ip::address a = asio::ip::make_address(std::string(text), ec);
  if (ec) return std::nullopt;
  return kind_of(a);
}

void HttpCaller::call(std::string_view method, std::string_view url, std::span<const OutgoingHeader> headers,
                      std::string_view body, Duration timeout, Done done) {
  RELAYSIM_ASSERT(method == "GET" || method == "POST", "a call is a GET or a POST");
  RELAYSIM_ASSERT(timeout > Duration::zero(), "a call has a deadline");
  RELAYSIM_ASSERT(static_cast<bool>(done), "a call has someone to answer");
  std::string problem;
  const std::optional<Url> u = parse_url(url, problem);
  if (!u) {
    HttpReply reply;
    reply.error = NetError::bad_url;  // nothing sent: another attempt would read the URL the same way
    reply.problem = std::move(problem);
    asio::post(io_, [done = std::move(done), reply = std::move(reply)]() mutable { done(std::move(reply)); });
    return;
  }
  auto call = std::make_shared<Call>(io_, policy_, u->scheme == "https" ? &tls_ : nullptr, *u, std::move(done), pool_);
  http::request<http::string_body>& req = call->request();
  req.method_string(method);
  req.target(u->target);
  req.version(11);
  const bool default_port = u->port == (u->scheme == "https" ? "443" : "80");
  const std::string host = u->host.find(':') != std::string::npos ? "[" + u->host + "]" : u->host;
  req.set(http::field::host, default_port ? host : host + ":" + u->port);
  req.set(http::field::user_agent, "relaysim/" RELAYSIM_VERSION);
  if (!pool_->enabled()) req.set(http::field::connection, "close");
  for (const OutgoingHeader& h : headers) req.set(h.name, h.value);
  if (method != "GET") {
    req.set(http::field::content_type, "application/json");
    req.body() = std::string(body);
    req.prepare_payload();
  }
  call->start(timeout);
}

}  // namespace relaysim::live
