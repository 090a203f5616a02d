// RedisKeyValue: the KeyValue port (model/resilience/kv.h) on a real Redis, through hiredis's
// asynchronous client on the service's Asio loop.
//
// Each call runs the limiter's script (model/resilience/limiter.lua, compiled in) with EVALSHA on
// the key's three Redis keys ({key}, {key}:log, {key}:members: one hash tag, one cluster slot),
// by Redis's own clock. A server
// that does not know the script (it restarted, and lost its script cache with its data) is sent
// the script itself (EVAL) for that call. No policy lives here: what the answer means, and what a
// pod does while Redis cannot answer (its local limiters at its share), is the model's
// SharedLimiter's.
//
// What each answer promises, as the port says:
//  - ok: the script ran, and this is its decision.
//  - unavailable: the script certainly did not run — no connection could be made, the connection
//    was refused before the call was written, or Redis refused the call (loading, busy, out of
//    memory, read-only).
//  - timeout: no answer within the call's timeout, or the connection broke after the call may
//    have been written, or the script failed after it may have written: it may have taken effect.
// Answers come on the loop, never inline. A connection that broke, or that left a call unanswered
// past its timeout, is dropped, and the next call makes a new one.
// hiredis writes with write(2), so a server gone away would raise SIGPIPE: the process must ignore
// it (relaysim's main does; the constructor asserts it).
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "model/resilience/kv.h"

struct redisAsyncContext;

namespace relaysim::live {

// Where Redis listens: a Unix socket path, or a host and port.
struct RedisAddress {
  std::string unix_socket;  // used when not empty
  // A numeric address: hiredis resolves a name before connecting, blocking the loop meanwhile.
  std::string host = "127.0.0.1";
  int port = 6379;
};

class RedisKeyValue final : public KeyValue {
 public:
  RedisKeyValue(boost::asio::io_context& io, RedisAddress address);
  ~RedisKeyValue() override;
  RedisKeyValue(const RedisKeyValue&) = delete;
  RedisKeyValue& operator=(const RedisKeyValue&) = delete;

  void limit(std::string_view key, const LimiterSpec& spec, LimitOp op, std::uint32_t cost, std::uint64_t member,
             Duration timeout, LimitCallback done) override;

  // Calls whose answer has not come yet (answered by timeout or not).
  std::size_t calls_in_flight() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the handlers still queued on the loop
};

}  // namespace relaysim::live
