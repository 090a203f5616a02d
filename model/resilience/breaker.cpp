#include "model/resilience/breaker.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/resilience/mutants.h"

namespace relaysim {

CircuitBreaker::CircuitBreaker(const BreakerConfig& config, OnChange on_change)
    : config_(config),
      on_change_(std::move(on_change)),
      window_(config.window) {
  RELAYSIM_ASSERT(BreakerConfig::kWindow.holds(config.window), "breaker window within its bounds");
  RELAYSIM_ASSERT(BreakerConfig::kHalfOpenProbes.holds(config.half_open_probes), "half-open needs at least one probe");
  RELAYSIM_ASSERT(BreakerConfig::kFailureRate.holds(config.failure_rate), "failure rate in (0, 1]");
  RELAYSIM_ASSERT(BreakerConfig::kOpenFor.holds(config.open_for), "an open breaker stays open for longer than zero");
}

Permit CircuitBreaker::acquire(Time now) {
  if (state_ == BreakerState::open && now >= open_until_) transition(BreakerState::half_open, now);
  switch (state_) {
    case BreakerState::closed:
      return {true, generation_};
    case BreakerState::open:
      return {false, generation_};
    case BreakerState::half_open:
      if (probes_in_flight_ >= config_.half_open_probes && !planted(mutant::half_open_unlimited)) {
        return {false, generation_};
      }
      ++probes_in_flight_;
      return {true, generation_};
  }
  return {false, generation_};
}

bool CircuitBreaker::refuses(Time now) const {
  switch (state_) {
    case BreakerState::closed:
      return false;
    case BreakerState::open:
      return now < open_until_;
    case BreakerState::half_open:
      return probes_in_flight_ >= config_.half_open_probes && !planted(mutant::half_open_unlimited);
  }
  return false;
}

std::optional<Time> CircuitBreaker::open_until() const {
  if (state_ != BreakerState::open) return std::nullopt;
  return open_until_;
}

void CircuitBreaker::release(const Permit& permit) {
  if (!permit.admitted || permit.generation != generation_) return;
  if (state_ == BreakerState::half_open) {
    RELAYSIM_ASSERT(probes_in_flight_ > 0, "released a probe that was never admitted");
    --probes_in_flight_;
  }
}

void CircuitBreaker::record(const Permit& permit, bool success, Time now) {
  RELAYSIM_ASSERT(permit.admitted, "only admitted calls have results");
  RELAYSIM_ASSERT(permit.generation <= generation_, "a permit comes from this breaker");
  // A late result from an older generation changes nothing.
  if (permit.generation != generation_ && !(planted(mutant::breaker_counts_stale_results) && state_ == BreakerState::closed)) {
    return;
  }
  switch (state_) {
    case BreakerState::closed: {
      window_.add(now, !success);
      if (success) return;
      const WindowTotals t = window_.totals(now);
      const std::uint32_t min_calls = planted(mutant::breaker_ignores_min_calls) ? 1 : config_.min_calls;
      if (t.calls >= min_calls && !planted(mutant::breaker_never_opens) &&
          static_cast<double>(t.failures) >= config_.failure_rate * static_cast<double>(t.calls)) {
        transition(BreakerState::open, now);
      }
      return;
    }
    case BreakerState::open:
      RELAYSIM_ASSERT(false, "an open breaker admits nothing in its own generation");
      return;
    case BreakerState::half_open:
      RELAYSIM_ASSERT(probes_in_flight_ > 0, "a probe result without a probe");
      --probes_in_flight_;
      if (!success) {
        transition(BreakerState::open, now);
      } else if (++probe_successes_ >= config_.half_open_probes || planted(mutant::breaker_closes_early)) {
        transition(BreakerState::closed, now);
      }
      return;
  }
}

void CircuitBreaker::transition(BreakerState to, Time now) {
  RELAYSIM_ASSERT(to != state_, "a transition changes the state");
  RELAYSIM_ASSERT(allows(kBreakerLifecycle, state_, to), "a move of the breaker's lifecycle (kBreakerLifecycle)");
  const BreakerState from = state_;
  state_ = to;
  ++generation_;
  probes_in_flight_ = 0;
  probe_successes_ = 0;
  if (to == BreakerState::open) open_until_ = now + config_.open_for;
  if (to == BreakerState::closed) window_.clear();  // judge the recovered service afresh
  if (on_change_) on_change_(from, to, now);
}

void validate(const BreakerConfig& c, const std::string& key, std::vector<ConfigError>& out) {
  check(c.window, BreakerConfig::kWindow, key + ".window", out);
  check(c.min_calls, BreakerConfig::kMinCalls, key + ".min_calls", out);
  check_share(c.failure_rate, BreakerConfig::kFailureRate, key + ".failure_rate", out);
  check(c.open_for, BreakerConfig::kOpenFor, key + ".open_for", out);
  check(c.half_open_probes, BreakerConfig::kHalfOpenProbes, key + ".half_open_probes", out);
}

}  // namespace relaysim
