// RedisScripts: Lua scripts run on a real Redis, through hiredis's asynchronous client on the
// service's Asio loop — what the shared limiter (live/redis_kv.h) and the outbox relay's log
// (live/outbox/redis_log.h) have in common.
//
// Each call sends EVALSHA with the script's digest; a server that does not know the script (it
// restarted, and lost its script cache) is sent the script itself (EVAL) for that call. What each
// answer promises:
//  - ok: the script ran, and this is what it returned (the reply is read inside the callback:
//    hiredis frees it after);
//  - unavailable: the script certainly did not run — no connection could be made, the connection
//    was refused before the call was written, or Redis refused the call (loading, busy, out of
//    memory, read-only);
//  - timeout: no answer within the call's timeout, or the connection broke after the call may
//    have been written, or the script failed after it may have written: it may have taken effect.
// Answers come on the loop, never inline, exactly once. A connection that broke, or that left a
// call unanswered past its timeout, is dropped, and the next call makes a new one.
// hiredis writes with write(2), so a server gone away would raise SIGPIPE: the process must ignore
// it (relaysim's main does; the constructor asserts it).
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/function.h"
#include "model/core/time.h"
#include "model/resilience/kv.h"

struct redisReply;

namespace relaysim::live {

// Where Redis listens: a Unix socket path, or a host and port.
struct RedisAddress {
  std::string unix_socket;  // used when not empty
  // A numeric address: hiredis resolves a name before connecting, blocking the loop meanwhile.
  std::string host = "127.0.0.1";
  int port = 6379;
};

// A script's text and its SHA-1 (what EVALSHA names it by).
class RedisScript {
 public:
  explicit RedisScript(std::string_view text);
  std::string_view text() const { return text_; }
  const std::string& sha() const { return sha_; }

 private:
  std::string_view text_;
  std::string sha_;
};

class RedisScripts {
 public:
  // `reply` is the script's answer when `status` is ok, else nullptr.
  using Done = InplaceFunction<void(KvStatus status, const redisReply* reply), 64>;

  RedisScripts(boost::asio::io_context& io, RedisAddress address);
  ~RedisScripts();
  RedisScripts(const RedisScripts&) = delete;
  RedisScripts& operator=(const RedisScripts&) = delete;

  // Runs `script` (which must outlive the call) with `keys` and `args`.
  void run(const RedisScript& script, std::vector<std::string> keys, std::vector<std::string> args, Duration timeout,
           Done done);

  // Calls whose answer has not come yet (answered by timeout or not).
  std::size_t calls_in_flight() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the handlers still queued on the loop
};

}  // namespace relaysim::live
