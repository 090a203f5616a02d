#include "live/http_server.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <optional>
#include <vector>

#include "model/core/assert.h"

namespace relaysim::live {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {
// Header names are compared without case (RFC 9110).
bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}
}  // namespace

std::string_view Incoming::header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (same_name(n, name)) return v;
  }
  return {};
}

std::size_t Incoming::header_count(std::string_view name) const {
  return static_cast<std::size_t>(
      std::count_if(headers.begin(), headers.end(), [&](const auto& h) { return same_name(h.first, name); }));
}

Response error_response(int status, std::string_view reason) {
  RELAYSIM_ASSERT(status >= 400 && status <= 599, "an error is answered with a 4xx or a 5xx");
  Response r;
  r.status = status;
  r.body = nlohmann::json{{"error", reason}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return r;
}

struct HttpServer::State : std::enable_shared_from_this<HttpServer::State> {
  State(asio::io_context& io, const tcp::endpoint& at, Handler h, ServerLimits l)
      : acceptor(io, at), retry(io), handler(std::move(h)), limits(l) {}
  void accept();

  tcp::acceptor acceptor;
  asio::steady_timer retry;  // after a failed accept (out of file descriptors): try again soon
  Handler handler;
  ServerLimits limits;
  bool stopped = false;
};

namespace {

using Request = http::request<http::string_body>;

// What a connection answers when it cannot read a request.
Response refusal(const error_code& ec, const ServerLimits& limits, bool extensions_over) {
  const std::string limit = std::to_string(limits.max_header) + " bytes";
  if (ec == http::error::body_limit) {
    return error_response(413, "the body is longer than " + std::to_string(limits.max_body) + " bytes");
  }
  if (extensions_over) return error_response(431, "the chunk extensions are longer than " + limit + " in all");
  if (ec == http::error::header_limit) return error_response(431, "the headers are longer than " + limit);
  if (ec == http::error::buffer_overflow) {
    // Beast counts neither a chunk's size line nor the trailers against a limit of its own: they
    // wait in the connection's buffer until whole, and the buffer holds at most the header limit.
    return error_response(431, "a chunk's size line or the trailers are longer than " + limit);
  }
  return error_response(400, "not a readable HTTP/1.1 request: " + ec.message());
}

Incoming incoming(const Request& request) {
  Incoming in;
  in.method = request.method_string();
  in.target = request.target();
  in.body = request.body();
  for (const auto& field : request) in.headers.emplace_back(field.name_string(), field.value());
  return in;
}

// One request's parser with every part of the request bounded. Beast bounds the start line and
// headers (header_limit) and the body (body_limit); it does not bound a chunked body's chunk
// extensions or its trailers, which are neither. So the bytes waiting to be parsed are held to
// the header limit (the connection's buffer, kBufferLimit below: a size line or the trailer
// section must fit in it whole), and chunk extensions, which the parser hands over and forgets,
// are counted here, at most the header limit in all.
class RequestReader {
 public:
  explicit RequestReader(const ServerLimits& limits) : limits_(limits) {
    RELAYSIM_ASSERT(limits.max_header > 0 && limits.max_header <= UINT32_MAX, "a header limit the parser can hold");
    parser_.body_limit(limits.max_body);
    parser_.header_limit(static_cast<std::uint32_t>(limits.max_header));
    parser_.on_chunk_header(on_chunk_);
  }
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  http::request_parser<http::string_body>& parser() { return parser_; }
  Response refusal(const error_code& ec) const { return live::refusal(ec, limits_, extensions_over_); }

 private:
  ServerLimits limits_;
  std::size_t extension_bytes_ = 0;
  bool extensions_over_ = false;
  // The parser keeps a reference to it: declared before the parser, destroyed after it.
  std::function<void(std::uint64_t, beast::string_view, error_code&)> on_chunk_ =
      [this](std::uint64_t, beast::string_view extensions, error_code& ec) {
        extension_bytes_ += extensions.size();
        if (extension_bytes_ > limits_.max_header) {
          extensions_over_ = true;
          ec = http::error::header_limit;
        }
      };
  http::request_parser<http::string_body> parser_;
};

// The most bytes a connection holds unparsed: enough for the whole header section, and for a
// chunk's size line or the trailer section, which Beast parses only once each is whole.
std::size_t buffer_limit(const ServerLimits& limits) { return limits.max_header; }

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<HttpServer::State> state)
      : stream_(std::move(socket)), state_(std::move(state)), buffer_(buffer_limit(state_->limits)) {}

  void read() {
    reader_.emplace(state_->limits);
    stream_.expires_after(state_->limits.idle);
    http::async_read(stream_, buffer_, reader_->parser(),
                     [self = shared_from_this()](const error_code& ec, std::size_t) { self->on_read(ec); });
  }

 private:
  void on_read(const error_code& ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::connection_reset ||
        ec == asio::error::operation_aborted || ec == asio::error::eof) {
      return close();
    }
    keep_alive_ = false;
    answered_ = false;
    if (ec) {
      unread_ = true;  // what the client is still sending must be read away, or its answer is lost
      return write(reader_->refusal(ec));
    }
    request_ = reader_->parser().release();
    keep_alive_ = request_.keep_alive() && !state_->stopped;
    head_ = request_.method() == http::verb::head;
    const Incoming in = incoming(request_);
    // While the handler works on an answer, the connection waits for it, not for its reader.
    stream_.expires_never();
    state_->handler(in, [self = shared_from_this()](Response&& r) { self->write(std::move(r)); });
  }

  void write(Response&& r) {
    if (answered_) return;
    answered_ = true;
    if (r.drop) return close();
    RELAYSIM_ASSERT(r.status >= 100 && r.status <= 599, "a response has an HTTP status");
    response_ = {};
    response_.version(11);
    response_.result(static_cast<unsigned>(r.status));
    response_.set(http::field::server, "relaysim/" RELAYSIM_VERSION);
    response_.set(http::field::content_type, r.content_type);
    for (const auto& [name, value] : r.headers) response_.set(name, value);
    response_.body() = std::move(r.body);
    response_.keep_alive(keep_alive_);
    response_.prepare_payload();
    if (head_) {
      // A HEAD answer says what a GET would carry, and carries nothing: a body here would be read
      // as the start of the next answer on this connection.
      const std::size_t length = response_.body().size();
      response_.body().clear();
      response_.content_length(length);
    }
    stream_.expires_after(state_->limits.idle);
    http::async_write(stream_, response_, [self = shared_from_this()](const error_code& ec, std::size_t) {
      if (!ec && self->unread_) return self->linger();
      if (ec || !self->keep_alive_) return self->close();
      self->read();
    });
  }

  // After refusing a request it did not read whole: closing at once, with the client's bytes
  // unread, would reset the connection, and the client could lose the answer before reading it.
  // So stop sending, read and drop what comes for a moment, then close.
  void linger() {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::seconds(2));
    drain_.emplace(kDrainChunk);
    discard();
  }
  void discard() {
    stream_.async_read_some(asio::buffer(*drain_), [self = shared_from_this()](const error_code& ec, std::size_t) {
      if (ec) return self->close();
      self->discard();
    });
  }

  void close() {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  std::shared_ptr<HttpServer::State> state_;
  beast::flat_buffer buffer_;
  std::optional<RequestReader> reader_;
  Request request_;
  http::response<http::string_body> response_;
  static constexpr std::size_t kDrainChunk = 16 * 1024;
  std::optional<std::vector<char>> drain_;
  bool unread_ = false;
  bool head_ = false;
  bool keep_alive_ = false;
  bool answered_ = true;
};

}  // namespace

Response answer_bytes(std::string_view bytes, const ServerLimits& limits,
                      const std::function<Response(const Incoming&)>& answer) {
  RELAYSIM_ASSERT(static_cast<bool>(answer), "a request has someone to answer it");
  // As a connection reads: the bytes arrive in its buffer, at most buffer_limit() of them unparsed
  // at a time, and the parser takes what it can of them.
  RequestReader reader(limits);
  http::request_parser<http::string_body>& parser = reader.parser();
  const std::size_t most = buffer_limit(limits);
  std::string buffer;
  error_code ec;
  for (;;) {
    if (!buffer.empty()) {
      const std::size_t used = parser.put(asio::buffer(buffer.data(), buffer.size()), ec);
      buffer.erase(0, used);
      if (parser.is_done() || (ec && ec != http::error::need_more)) break;
      if (!ec && used > 0) continue;  // parsed a part: parse on
      ec = {};
    }
    // The parser needs more than the buffer holds.
    if (bytes.empty()) {
      if (parser.got_some()) parser.put_eof(ec);
      break;
    }
    if (buffer.size() >= most) {
      ec = http::error::buffer_overflow;
      break;
    }
    const std::size_t take = std::min(most - buffer.size(), bytes.size());
    buffer.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
  }
  if (ec) return reader.refusal(ec);
  if (!parser.is_done()) return error_response(400, "an incomplete request");
  const Request request = parser.release();
  return answer(incoming(request));
}

void HttpServer::State::accept() {
  acceptor.async_accept([self = shared_from_this()](const error_code& ec, tcp::socket socket) {
    if (self->stopped) return;
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      self->retry.expires_after(std::chrono::milliseconds(100));
      self->retry.async_wait([self](const error_code& e) {
        if (!e && !self->stopped) self->accept();
      });
      return;
    }
    std::make_shared<Session>(std::move(socket), self)->read();
    self->accept();
  });
}

HttpServer::HttpServer(asio::io_context& io, const tcp::endpoint& at, Handler handler, ServerLimits limits)
    : state_(std::make_shared<State>(io, at, std::move(handler), limits)) {
  RELAYSIM_ASSERT(static_cast<bool>(state_->handler), "a server has a handler");
  state_->accept();
}

HttpServer::~HttpServer() { stop_accepting(); }

unsigned short HttpServer::port() const { return state_->acceptor.local_endpoint().port(); }

void HttpServer::stop_accepting() {
  if (state_->stopped) return;
  state_->stopped = true;
  error_code ignored;
  state_->acceptor.close(ignored);
  state_->retry.cancel();
}

std::string url_host(const tcp::endpoint& at) {
  if (at.address().is_unspecified()) return "127.0.0.1";
  return at.address().is_v6() ? "[" + at.address().to_string() + "]" : at.address().to_string();
}

tcp::endpoint listen_endpoint(std::string_view text, std::string_view what) {
  std::string problem;
  const std::optional<tcp::endpoint> at = parse_listen(text, problem);
  if (!at) throw std::invalid_argument(std::string(what) + ": " + problem);
  return *at;
}

std::optional<tcp::endpoint> parse_listen(std::string_view text, std::string& problem) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    problem = "expected HOST:PORT, such as 127.0.0.1:8080";
    return std::nullopt;
  }
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535) {
    problem = "the port '" + std::string(port_text) + "' is not a number from 0 to 65535";
    return std::nullopt;
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  if (host == "localhost") host = "127.0.0.1";
  error_code bad;
  const asio::ip::address address = asio::ip::make_address(std::string(host), bad);
  if (bad) {
    problem = "'" + std::string(host) + "' is not an IP address (or localhost)";
    return std::nullopt;
  }
  return tcp::endpoint(address, static_cast<unsigned short>(port));
}

}  // namespace relaysim::live
