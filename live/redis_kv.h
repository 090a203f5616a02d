// RedisKeyValue: the KeyValue port (model/resilience/kv.h) on a real Redis (live/redis_client.h).
//
// Each call runs the limiter's script (model/resilience/limiter.lua, compiled in) on the key's
// three Redis keys ({key}, {key}:log, {key}:members: one hash tag, one cluster slot), by Redis's
// own clock. No policy lives here: what the answer means, and what a pod does while Redis cannot
// answer (its local limiters at its share), is the model's SharedLimiter's.
//
// What each answer promises, as the port says: ok, the script ran and this is its decision;
// unavailable, it certainly did not run; timeout, it may have (RedisScripts says when each is
// given; an answer that is not the script's is a timeout too).
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "live/redis_client.h"
#include "model/resilience/kv.h"

namespace relaysim::live {

class RedisKeyValue final : public KeyValue {
 public:
  RedisKeyValue(boost::asio::io_context& io, RedisAddress address);

  void limit(std::string_view key, const LimiterSpec& spec, LimitOp op, std::uint32_t cost, std::uint64_t member,
             Duration timeout, LimitCallback done) override;

  // Calls whose answer has not come yet (answered by timeout or not).
  std::size_t calls_in_flight() const { return scripts_.calls_in_flight(); }

 private:
  RedisScripts scripts_;
};

}  // namespace relaysim::live
