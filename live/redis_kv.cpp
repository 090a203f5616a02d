#include "live/redis_kv.h"

#include <hiredis/hiredis.h>

#include <charconv>
#include <optional>

#include "live/limiter_script.h"
#include "model/core/assert.h"

namespace relaysim::live {

namespace {

// The script's answer, {admitted, retry_after}; nullopt when it is not one.
std::optional<LimitDecision> decision_of(const redisReply& r) {
  if (r.type != REDIS_REPLY_ARRAY || r.elements != 2 || r.element[0]->type != REDIS_REPLY_INTEGER ||
      r.element[1]->type != REDIS_REPLY_STRING) {
    return std::nullopt;
  }
  LimitDecision d;
  d.admitted = r.element[0]->integer == 1;
  const std::string_view retry(r.element[1]->str, r.element[1]->len);
  if (retry == "max") {
    d.retry_after = Duration::max();
    return d;
  }
  std::int64_t ns = 0;
  const auto [end, ec] = std::from_chars(retry.data(), retry.data() + retry.size(), ns);
  if (ec != std::errc{} || end != retry.data() + retry.size() || ns < 0) return std::nullopt;
  d.retry_after = Duration{ns};
  return d;
}

const RedisScript& limiter_script() {
  static const RedisScript script(kLimiterScript);
  return script;
}

}  // namespace

RedisKeyValue::RedisKeyValue(boost::asio::io_context& io, RedisAddress address) : scripts_(io, std::move(address)) {}

void RedisKeyValue::limit(std::string_view key, const LimiterSpec& spec, LimitOp op, std::uint32_t cost,
                          std::uint64_t member, Duration timeout, LimitCallback done) {
  RELAYSIM_ASSERT(static_cast<bool>(done) && timeout > Duration::zero(), "a call has a timeout and someone to answer");
  RELAYSIM_ASSERT(valid(spec) && cost >= 1, "a limit within its bounds and a call that costs something");
  RELAYSIM_ASSERT(!key.empty(), "a call names its key");
  // One hash tag for the three keys, so that a Redis Cluster keeps them in one slot.
  const std::string k = "{" + std::string(key) + "}";
  scripts_.run(limiter_script(), {k, k + ":log", k + ":members"},
               {std::string(to_string(op)), std::string(to_string(spec.algorithm)), std::to_string(spec.limit),
                std::to_string(to_ns(spec.window)), std::to_string(spec.burst), std::to_string(cost),
                std::to_string(member), ""},  // no time: Redis's own clock
               timeout, [done = std::move(done)](KvStatus status, const redisReply* reply) mutable {
                 if (status != KvStatus::ok) return done(KvLimitAnswer{status, {}});
                 const std::optional<LimitDecision> d = decision_of(*reply);
                 // An answer that is not the script's: something else answers on that address. It may have run.
                 done(d ? KvLimitAnswer{KvStatus::ok, *d} : KvLimitAnswer{KvStatus::timeout, {}});
               });
}

}  // namespace relaysim::live
