// KeyValue: the port to a shared key-value store with atomic scripts — Redis, as the SMS gateway's
// cluster-wide rate limits use it. The simulated one is sim/world/kv.h (latency, outages, restarts
// that lose data, answers lost after the call took effect); the live one, live/redis_kv.h, runs
// the limiter as one Lua script (model/resilience/limiter.lua).
//
// Promises:
//  - Each call is atomic on the store: a check-and-add cannot interleave with another client's.
//  - The store applies the limiter (model/resilience/limiters.h) by its own clock (Redis TIME), so
//    clients' clocks cannot skew a window.
//  - Every call can fail: the store refused it (`unavailable`: it certainly did not take effect) or
//    no answer came in time (`timeout`: it may have taken effect). A sliding log's members make a
//    retried take safe: the second try of the same member is not counted twice.
//  - Answers come by callback, never inline.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/core/function.h"
#include "model/core/names.h"
#include "model/core/time.h"
#include "model/resilience/limiters.h"

namespace relaysim {

enum class KvStatus : std::uint8_t { ok, unavailable, timeout };
inline constexpr auto kKvStatusNames = names<KvStatus>({
    {KvStatus::ok, "ok"}, {KvStatus::unavailable, "unavailable"}, {KvStatus::timeout, "timeout"}});
constexpr std::string_view to_string(KvStatus s) { return kKvStatusNames[s]; }

// take: admit and record if the limit allows (Limiter::take). peek: what take would say, recording
// nothing. force: record whatever the limit says — only a client that checks, then sets, in two
// calls does this (the non-atomic pattern real gateways shipped).
enum class LimitOp : std::uint8_t { take, peek, force };
inline constexpr auto kLimitOpNames = names<LimitOp>({
    {LimitOp::take, "take"}, {LimitOp::peek, "peek"}, {LimitOp::force, "force"}});
constexpr std::string_view to_string(LimitOp op) { return kLimitOpNames[op]; }

struct KvLimitAnswer {
  KvStatus status = KvStatus::unavailable;
  LimitDecision decision;  // when ok
};

class KeyValue {
 public:
  virtual ~KeyValue() = default;
  using LimitCallback = InplaceFunction<void(const KvLimitAnswer&), 48>;

  // Applies `op` to the limiter at `key`, whose spec is `spec` (a key met with another spec starts
  // afresh under the new one). `member` names the call for the sliding log (0: anonymous).
  virtual void limit(std::string_view key, const LimiterSpec& spec, LimitOp op, std::uint32_t cost,
                     std::uint64_t member, Duration timeout, LimitCallback done) = 0;
};

}  // namespace relaysim
