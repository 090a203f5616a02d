// HttpCaller's kept-alive connections: a second call to the same place takes the first's
// connection; one the server closed while it sat idle is noticed and not used; a POST that a
// pooled connection loses after it was written is "no answer", never sent again; with no keep-alive
// every call has a connection of its own.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "live/http_call.h"

namespace relaysim::live {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// A server that answers each request as `answer` says, counting connections and requests.
struct TestServer {
  enum class Answer { keep_open, close_after_answer, drop_second_request };
  asio::io_context& io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  Answer answer = Answer::keep_open;
  int connections = 0;
  int requests = 0;
  std::vector<std::string> heads;       // each request's head, as read
  std::function<void()> on_closed;      // after the server closed a connection it answered

  explicit TestServer(asio::io_context& i, Answer a) : io(i), answer(a) { accept(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/hook"; }

  struct Session : std::enable_shared_from_this<Session> {
    TestServer& server;
    tcp::socket socket;
    asio::streambuf buffer;
    int served = 0;
    Session(TestServer& s, tcp::socket sock) : server(s), socket(std::move(sock)) {}

    void read() {
      asio::async_read_until(socket, buffer, "\r\n\r\n", [self = shared_from_this()](const error_code& ec, std::size_t n) {
        if (ec) return;
        std::string head(asio::buffers_begin(self->buffer.data()), asio::buffers_begin(self->buffer.data()) + n);
        self->buffer.consume(n);
        std::size_t length = 0;
        if (const std::size_t at = head.find("Content-Length: "); at != std::string::npos) {
          length = std::stoul(head.substr(at + 16));
        }
        self->server.heads.push_back(head);
        const std::size_t have = self->buffer.size();
        asio::async_read(self->socket, self->buffer, asio::transfer_exactly(length > have ? length - have : 0),
                         [self, length](const error_code& e, std::size_t) {
                           if (e) return;
                           self->buffer.consume(length);
                           self->answer();
                         });
      });
    }

    void answer() {
      ++server.requests;
      ++served;
      if (server.answer == Answer::drop_second_request && served == 2) {
        socket.close();  // read it whole, answered nothing
        return;
      }
      static const std::string kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
      asio::async_write(socket, asio::buffer(kOk), [self = shared_from_this()](const error_code& ec, std::size_t) {
        if (ec) return;
        if (self->server.answer == Answer::close_after_answer) {
          self->socket.close();
          if (self->server.on_closed) self->server.on_closed();
          return;
        }
        self->read();
      });
    }
  };

  void accept() {
    acceptor.async_accept([this](const error_code& ec, tcp::socket socket) {
      if (ec) return;
      ++connections;
      std::make_shared<Session>(*this, std::move(socket))->read();
      accept();
    });
  }
};

constexpr AddressPolicy kLoopback{true, true, true};
const std::vector<OutgoingHeader> kNoHeaders;

struct Replies {
  std::vector<HttpReply> got;
  HttpCaller::Done collect() {
    return [this](HttpReply&& r) { got.push_back(std::move(r)); };
  }
};

// Two calls, the second made when the first is answered (its connection back in the pool).
Replies call_twice(asio::io_context& io, HttpCaller& caller, const TestServer& server) {
  Replies replies;
  caller.call("POST", server.url(), kNoHeaders, "{}", std::chrono::seconds(5), [&](HttpReply&& first) {
    replies.got.push_back(std::move(first));
    caller.call("POST", server.url(), kNoHeaders, "{}", std::chrono::seconds(5), replies.collect());
  });
  while (replies.got.size() < 2 && io.run_one() > 0) {
  }
  return replies;
}

TEST(HttpPool, TheSecondCallToAPlaceTakesTheFirstsConnection) {
  asio::io_context io;
  TestServer server(io, TestServer::Answer::keep_open);
  HttpCaller caller(io, kLoopback);
  Replies replies = call_twice(io, caller, server);
  ASSERT_EQ(replies.got.size(), 2u);
  EXPECT_EQ(replies.got[0].status, 200);
  EXPECT_EQ(replies.got[1].status, 200);
  EXPECT_EQ(server.requests, 2);
  EXPECT_EQ(server.connections, 1);
  EXPECT_EQ(server.heads[0].find("Connection: close"), std::string::npos);
}

TEST(HttpPool, AConnectionTheServerClosedWhileIdleIsNotUsed) {
  asio::io_context io;
  TestServer server(io, TestServer::Answer::close_after_answer);
  HttpCaller caller(io, kLoopback);
  Replies replies;
  // The second call starts once the first has its answer (its connection is in the pool) and the
  // server has closed that connection: it must see that and connect anew.
  bool closed = false;
  const auto second = [&] {
    if (closed && replies.got.size() == 1) {
      caller.call("POST", server.url(), kNoHeaders, "{}", std::chrono::seconds(5), replies.collect());
    }
  };
  server.on_closed = [&] {
    closed = true;
    second();
  };
  caller.call("POST", server.url(), kNoHeaders, "{}", std::chrono::seconds(5), [&](HttpReply&& first) {
    replies.got.push_back(std::move(first));
    second();
  });
  while (replies.got.size() < 2 && io.run_one() > 0) {
  }
  ASSERT_EQ(replies.got.size(), 2u);
  EXPECT_EQ(replies.got[1].error, NetError::none) << replies.got[1].problem;
  EXPECT_EQ(replies.got[1].status, 200);
  EXPECT_EQ(server.connections, 2);
}

TEST(HttpPool, APostAPooledConnectionLosesAfterItWasWrittenIsNoAnswerAndNotSentAgain) {
  asio::io_context io;
  TestServer server(io, TestServer::Answer::drop_second_request);
  HttpCaller caller(io, kLoopback);
  Replies replies = call_twice(io, caller, server);
  ASSERT_EQ(replies.got.size(), 2u);
  EXPECT_EQ(replies.got[1].error, NetError::timeout) << "the endpoint may have acted on it";
  EXPECT_EQ(server.requests, 2) << "sent once, not again on a fresh connection";
  EXPECT_EQ(server.connections, 1);
}

TEST(HttpPool, WithoutKeepAliveEveryCallHasAConnectionOfItsOwn) {
  asio::io_context io;
  TestServer server(io, TestServer::Answer::keep_open);
  HttpCaller caller(io, kLoopback, {}, Duration::zero());
  Replies replies = call_twice(io, caller, server);
  ASSERT_EQ(replies.got.size(), 2u);
  EXPECT_EQ(server.connections, 2);
  EXPECT_NE(server.heads[0].find("Connection: close"), std::string::npos);
}

}  // namespace
}  // namespace relaysim::live
