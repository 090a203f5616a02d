#include "model/resilience/shared_limiter.h"

#include <algorithm>
#include <utility>

#include "model/core/assert.h"
#include "model/resilience/mutants.h"

namespace relaysim {

SharedLimiter::SharedLimiter(std::string key, const SharedLimitConfig& config, KeyValue& kv, const Clock& clock)
    : key_(std::move(key)),
      config_(config),
      kv_(kv),
      clock_(clock),
      breaker_(config.breaker),
      local_(config.spec.share(config.pods)),
      spacing_(config.spec.window * config.pods / config.spec.limit) {
  RELAYSIM_ASSERT(config.pods >= 1, "a limit is shared among at least one pod");
  RELAYSIM_ASSERT(!key_.empty(), "a shared limit has a key in the store");
  RELAYSIM_ASSERT(SharedLimitConfig::kTimeout.holds(config.timeout), "store calls have a timeout");
}

Duration SharedLimiter::turn(Time now, Duration earliest) {
  if (earliest == Duration::max()) return earliest;
  const Time t = std::max(now + earliest, next_turn_);
  next_turn_ = t + spacing_;
  return t - now;
}

void SharedLimiter::take(std::uint32_t cost, std::uint64_t member, Callback done) {
  RELAYSIM_ASSERT(cost >= 1, "a call costs at least one");
  const Time now = clock_.now();
  if (now < closed_until_ && cost >= closed_cost_) {
    done(SharedDecision{false, turn(now, closed_until_ - now), LimitVia::store, KvStatus::ok, true});
    return;
  }
  const Permit permit = breaker_.acquire(now);
  if (!permit.admitted) {
    fall_back(cost, member, KvStatus::unavailable, done);
    return;
  }
  const std::uint32_t slot = pending_.acquire();
  pending_[slot] = Pending{std::move(done), permit, cost, member};
  if (planted(mutant::limiter_check_then_set)) {
    // The planted bug: look, then record in a second call; another pod can look in between.
    kv_.limit(key_, config_.spec, LimitOp::peek, cost, member, config_.timeout,
              [this, slot](const KvLimitAnswer& a) { checked(slot, a); });
    return;
  }
  kv_.limit(key_, config_.spec, LimitOp::take, cost, member, config_.timeout,
            [this, slot](const KvLimitAnswer& a) { answered(slot, a); });
}

void SharedLimiter::checked(std::uint32_t slot, const KvLimitAnswer& a) {
  RELAYSIM_ASSERT(slot < pending_.size(), "an answer for a call this limiter sent");
  if (a.status != KvStatus::ok || !a.decision.admitted) {
    answered(slot, a);
    return;
  }
  const Pending& p = pending_[slot];
  kv_.limit(key_, config_.spec, LimitOp::force, p.cost, p.member, config_.timeout,
            [this, slot, a](const KvLimitAnswer& b) { answered(slot, b.status == KvStatus::ok ? a : b); });
}

void SharedLimiter::answered(std::uint32_t slot, const KvLimitAnswer& a) {
  RELAYSIM_ASSERT(slot < pending_.size(), "an answer for a call this limiter sent");
  Pending p = std::move(pending_[slot]);
  pending_.release(slot);
  breaker_.record(p.permit, a.status == KvStatus::ok, clock_.now());
  if (a.status == KvStatus::ok) {
    const Time now = clock_.now();
    Duration retry_after{};
    if (!a.decision.admitted) {
      if (a.decision.retry_after != Duration::max() && now + a.decision.retry_after > closed_until_) {
        closed_until_ = now + a.decision.retry_after;
        closed_cost_ = p.cost;
      }
      retry_after = turn(now, a.decision.retry_after);
    }
    p.done(SharedDecision{a.decision.admitted, retry_after, LimitVia::store, KvStatus::ok});
    return;
  }
  fall_back(p.cost, p.member, a.status, p.done);
}

void SharedLimiter::fall_back(std::uint32_t cost, std::uint64_t member, KvStatus store, Callback& done) {
  switch (config_.when_down) {
    case StoreDownPolicy::allow:
      done(SharedDecision{true, {}, LimitVia::allow, store});
      return;
    case StoreDownPolicy::deny:
      // Try again once the breaker would let a probe through.
      done(SharedDecision{false, config_.breaker.open_for, LimitVia::deny, store});
      return;
    case StoreDownPolicy::local: {
      const Time now = clock_.now();
      const LimitDecision d = local_.take(now, cost, member);
      done(SharedDecision{d.admitted, d.admitted ? Duration{} : turn(now, d.retry_after), LimitVia::local, store, false, now});
      return;
    }
  }
}

void validate(const SharedLimitConfig& c, const std::string& key, std::vector<ConfigError>& out) {
  validate(c.spec, key, out);
  check(c.timeout, SharedLimitConfig::kTimeout, key + ".timeout", out);
  validate(c.breaker, key + ".breaker", out);
}

}  // namespace relaysim
