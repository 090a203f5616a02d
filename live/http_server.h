// HttpServer: HTTP/1.1 on Beast, for the live service's API and for `relaysim world`.
//
// It reads requests (keep-alive, one at a time per connection), hands each to the handler as an
// Incoming that owns nothing, and writes whatever Response the handler gives to its Respond, then
// or later. A request it cannot read gets its 4xx here, with the reason, and the connection is
// closed: a body over the limit 413, headers over the limit 431, anything that is not HTTP/1.x
// 400. A connection idle for longer than `idle` is closed.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/core/time.h"

namespace relaysim::live {

struct Incoming {
  std::string_view method;
  std::string_view target;  // the path and query, as sent
  std::string_view body;
  std::vector<std::pair<std::string_view, std::string_view>> headers;  // names as sent
  // The first header called `name`, compared without case; empty when absent.
  std::string_view header(std::string_view name) const;
  // How many headers are called `name` (compared without case).
  std::size_t header_count(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Close the connection without answering (a simulated black hole or lost response).
  bool drop = false;
};

// Answers one request; must be called at most once. Dropping it unanswered closes the connection.
using Respond = std::function<void(Response&&)>;
using Handler = std::function<void(const Incoming&, Respond)>;

struct ServerLimits {
  std::size_t max_body = 1 << 20;
  std::size_t max_header = 16 * 1024;
  Duration idle = std::chrono::seconds(30);
};

// The JSON error every 4xx and 5xx carries: {"error": reason}.
Response error_response(int status, std::string_view reason);

class HttpServer {
 public:
  // Listens on `at` (port 0: a free port, see port()). Throws boost::system::system_error when the
  // address cannot be bound.
  HttpServer(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& at, Handler handler,
             ServerLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  unsigned short port() const;
  // Stops accepting; connections open now finish what they read and then close.
  void stop_accepting();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// Reads one request from `bytes` as a connection does, and answers it: with the refusal a
// connection would send when the bytes are not a readable request, else with `answer`'s. An
// incomplete request is answered 400. (The fuzz target of the request parser drives this.)
Response answer_bytes(std::string_view bytes, const ServerLimits& limits,
                      const std::function<Response(const Incoming&)>& answer);

// "127.0.0.1:8080", "[::1]:8080", ":8080" (every address); nullopt, with `problem`, otherwise.
std::optional<boost::asio::ip::tcp::endpoint> parse_listen(std::string_view text, std::string& problem);
// How a listening address is written in a URL: "127.0.0.1", "[::1]"; every address (0.0.0.0, ::)
// as the machine's own loopback, where a client on it reaches the server.
std::string url_host(const boost::asio::ip::tcp::endpoint& at);
// parse_listen, or std::invalid_argument saying what `what` ("listen", "--listen") got wrong.
boost::asio::ip::tcp::endpoint listen_endpoint(std::string_view text, std::string_view what);

}  // namespace relaysim::live
