#include "live/redis_client.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <openssl/sha.h>
#include <signal.h>

#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <unordered_map>
#include <vector>

#include "model/core/assert.h"

namespace relaysim::live {

namespace asio = boost::asio;

namespace {

std::string sha1_hex(std::string_view text) {
  std::array<unsigned char, SHA_DIGEST_LENGTH> digest{};
  SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (const unsigned char b : digest) {
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  return hex;
}

// An error Redis answers before running anything: the call certainly did not take effect.
bool refused_before_running(std::string_view error) {
  for (const std::string_view prefix : {"LOADING", "BUSY", "OOM", "READONLY", "MASTERDOWN", "NOSCRIPT", "MISCONF", "NOREPLICAS"}) {
    if (error.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace

RedisScript::RedisScript(std::string_view text) : text_(text), sha_(sha1_hex(text)) {}

struct RedisScripts::State : std::enable_shared_from_this<State> {
  // One connection: hiredis's context, and its socket watched on the loop for hiredis's event
  // hooks. Queued handlers hold it, so it outlives the context, which hiredis frees itself (after
  // an error, or when the server goes away).
  struct Link : std::enable_shared_from_this<Link> {
    Link(asio::io_context& io, redisAsyncContext* context, std::weak_ptr<State> state)
        : ac(context), socket(io, context->c.fd), owner(std::move(state)) {}
    ~Link() {
      // hiredis closes the socket itself: the descriptor is let go, never closed here.
      if (socket.is_open()) (void)socket.release();
    }
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;

    redisAsyncContext* ac;  // nullptr once hiredis has freed it
    asio::posix::stream_descriptor socket;
    std::weak_ptr<State> owner;
    bool connected = false;  // hiredis said the connection is up
    bool want_read = false, want_write = false;
    bool read_armed = false, write_armed = false;
    std::shared_ptr<Link> self;  // held while hiredis holds the context

    void arm(bool write) {
      bool& armed = write ? write_armed : read_armed;
      if (armed || ac == nullptr) return;
      armed = true;
      socket.async_wait(write ? asio::posix::stream_descriptor::wait_write : asio::posix::stream_descriptor::wait_read,
                        [link = shared_from_this(), write](const boost::system::error_code& ec) {
        (write ? link->write_armed : link->read_armed) = false;
        if (ec || link->ac == nullptr) return;
        if (write ? link->want_write : link->want_read) {
          if (write) {
            redisAsyncHandleWrite(link->ac);
          } else {
            redisAsyncHandleRead(link->ac);
          }
        }
        // The context may be gone now (an error, or the server closed the connection).
        if (link->ac != nullptr && (write ? link->want_write : link->want_read)) link->arm(write);
      });
    }

    static Link& of(void* data) { return *static_cast<Link*>(data); }
    static void add_read(void* data) {
      of(data).want_read = true;
      of(data).arm(false);
    }
    static void del_read(void* data) { of(data).want_read = false; }
    static void add_write(void* data) {
      of(data).want_write = true;
      of(data).arm(true);
    }
    static void del_write(void* data) { of(data).want_write = false; }
    // hiredis is about to close the socket and free the context. The descriptor leaves the loop's
    // watch now, while its number is still this socket's (a later connection may be given the
    // same number). hiredis touches nothing of ours after this, so the Link may go with `keep`.
    static void cleanup(void* data) {
      Link& link = of(data);
      link.ac = nullptr;
      link.want_read = link.want_write = false;
      if (link.socket.is_open()) (void)link.socket.release();  // cancels the waits
      const std::shared_ptr<Link> keep = std::move(link.self);
    }
  };

  struct Call {
    Done done;  // empty once answered
    std::unique_ptr<asio::steady_timer> timer;
    std::shared_ptr<Link> link;      // the connection it went out on
    const RedisScript* script = nullptr;
    std::vector<std::string> args;   // after the script: the number of keys, the keys, the arguments
    bool sent_script = false;        // EVAL with the script's text, after a NOSCRIPT
  };

  State(asio::io_context& context, RedisAddress where) : io(context), address(std::move(where)) {}

  asio::io_context& io;
  RedisAddress address;
  std::shared_ptr<Link> link;  // the current connection, if any
  std::unordered_map<std::uint64_t, Call> calls;
  std::uint64_t next_id = 1;

  // The connection, made now if there is none or the last one broke; nullptr if none can be made.
  std::shared_ptr<Link> connection() {
    if (link && link->ac != nullptr) return link;
    link.reset();
    redisAsyncContext* ac = address.unix_socket.empty() ? redisAsyncConnect(address.host.c_str(), address.port)
                                                         : redisAsyncConnectUnix(address.unix_socket.c_str());
    if (ac == nullptr) return nullptr;
    if (ac->err != 0) {
      redisAsyncFree(ac);
      return nullptr;
    }
    link = std::make_shared<Link>(io, ac, weak_from_this());
    link->self = link;
    ac->data = link.get();
    ac->ev.data = link.get();
    ac->ev.addRead = &Link::add_read;
    ac->ev.delRead = &Link::del_read;
    ac->ev.addWrite = &Link::add_write;
    ac->ev.delWrite = &Link::del_write;
    ac->ev.cleanup = &Link::cleanup;
    redisAsyncSetConnectCallback(ac, [](const redisAsyncContext* c, int status) {
      if (status == REDIS_OK) Link::of(c->data).connected = true;
    });
    return link;
  }

  // Answers call `id` (once; later answers are dropped) and, when `last`, forgets it.
  void answer(std::uint64_t id, KvStatus status, const redisReply* reply, bool last) {
    const auto it = calls.find(id);
    if (it == calls.end()) return;
    Done done = std::move(it->second.done);
    it->second.done = {};
    if (last) {
      calls.erase(it);
    } else if (it->second.timer) {
      it->second.timer->cancel();
    }
    if (done) done(status, status == KvStatus::ok ? reply : nullptr);
  }

  // Answers call `id` from the loop, not from inside the caller.
  void answer_later(std::uint64_t id, KvStatus status) {
    asio::post(io, [weak = weak_from_this(), id, status] {
      if (const auto s = weak.lock()) s->answer(id, status, nullptr, true);
    });
  }

  void send(std::uint64_t id) {
    Call& call = calls.at(id);
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    const auto add = [&](std::string_view a) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    };
    add(call.sent_script ? "EVAL" : "EVALSHA");
    add(call.sent_script ? call.script->text() : std::string_view(call.script->sha()));
    for (const std::string& a : call.args) add(a);
    void* privdata = reinterpret_cast<void*>(static_cast<std::uintptr_t>(id));
    if (call.link->ac == nullptr ||
        redisAsyncCommandArgv(call.link->ac, &State::on_reply, privdata, static_cast<int>(argv.size()), argv.data(),
                              lengths.data()) != REDIS_OK) {
      // Not written. (A first try after a NOSCRIPT ran nothing either.)
      answer_later(id, KvStatus::unavailable);
    }
  }

  static void on_reply(redisAsyncContext* ac, void* reply, void* privdata) {
    Link& link = Link::of(ac->data);
    const auto state = link.owner.lock();
    if (!state) return;
    state->replied(link, static_cast<const redisReply*>(reply), static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(privdata)));
  }

  void replied(const Link& from, const redisReply* r, std::uint64_t id) {
    const auto it = calls.find(id);
    if (it == calls.end()) return;
    if (r == nullptr) {
      // The connection is gone with the call unanswered: written on a connection that was up, it
      // may have run; on one that never came up, it did not.
      answer(id, from.connected ? KvStatus::timeout : KvStatus::unavailable, nullptr, true);
      return;
    }
    if (r->type == REDIS_REPLY_ERROR) {
      const std::string_view error(r->str, r->len);
      if (error.starts_with("NOSCRIPT") && !it->second.sent_script) {
        it->second.sent_script = true;  // Redis restarted and lost its scripts: send the text
        send(id);
        return;
      }
      answer(id, refused_before_running(error) ? KvStatus::unavailable : KvStatus::timeout, nullptr, true);
      return;
    }
    answer(id, KvStatus::ok, r, true);
  }
};

RedisScripts::RedisScripts(asio::io_context& io, RedisAddress address)
    : state_(std::make_shared<State>(io, std::move(address))) {
  struct sigaction pipe {};
  RELAYSIM_ASSERT(::sigaction(SIGPIPE, nullptr, &pipe) == 0 && pipe.sa_handler == SIG_IGN,
                  "the process ignores SIGPIPE (a write to a Redis gone away must fail, not kill it)");
}

RedisScripts::~RedisScripts() {
  // Nobody is left to tell: the calls are dropped unanswered, then the connection is closed.
  for (auto& [id, call] : state_->calls) {
    call.done = {};
    if (call.timer) call.timer->cancel();
  }
  state_->calls.clear();
  if (state_->link && state_->link->ac != nullptr) redisAsyncFree(state_->link->ac);
  state_->link.reset();
}

std::size_t RedisScripts::calls_in_flight() const { return state_->calls.size(); }

void RedisScripts::run(const RedisScript& script, std::vector<std::string> keys, std::vector<std::string> args,
                       Duration timeout, Done done) {
  RELAYSIM_ASSERT(static_cast<bool>(done) && timeout > Duration::zero(), "a call has a timeout and someone to answer");
  State& s = *state_;
  const std::uint64_t id = s.next_id++;
  State::Call& call = s.calls[id];
  call.done = std::move(done);
  call.script = &script;
  call.args.reserve(1 + keys.size() + args.size());
  call.args.push_back(std::to_string(keys.size()));
  for (std::string& k : keys) call.args.push_back(std::move(k));
  for (std::string& a : args) call.args.push_back(std::move(a));
  call.link = s.connection();
  if (!call.link) {
    s.answer_later(id, KvStatus::unavailable);
    return;
  }
  call.timer = std::make_unique<asio::steady_timer>(s.io, std::chrono::duration_cast<asio::steady_timer::duration>(timeout));
  call.timer->async_wait([weak = state_->weak_from_this(), id](const boost::system::error_code& ec) {
    if (ec) return;
    const auto st = weak.lock();
    if (!st) return;
    // No answer in time: it may have run. A connection that stopped answering (a stalled server,
    // a peer gone without a word, a connect that hangs) is dropped, so the next call makes a new
    // one instead of queueing behind it; its other calls are answered timeout as hiredis lets go.
    st->answer(id, KvStatus::timeout, nullptr, false);
    const auto it = st->calls.find(id);
    if (it != st->calls.end() && it->second.link && it->second.link->ac != nullptr) redisAsyncFree(it->second.link->ac);
  });
  s.send(id);
}

}  // namespace relaysim::live
