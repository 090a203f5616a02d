#include "model/sms/routing.h"

#include "model/core/assert.h"

namespace relaysim::sms {

Router::Router(const RoutingConfig& config, std::size_t providers) : config_(config) {
  RELAYSIM_ASSERT(providers >= 1 && providers <= kMaxProviders, "1 to 64 providers");
  health_.reserve(providers);
  for (std::size_t i = 0; i < providers; ++i) health_.push_back({PeakEwma(config.ewma), WindowCounter(config.window), {}});
}

double Router::score(ProviderId p, Time now) const {
  switch (config_.policy) {
    case RoutingPolicy::round_robin: return 0.0;
    case RoutingPolicy::ewma: return health_[p].ewma.estimate_ns();
    case RoutingPolicy::error_rate: {
      const WindowTotals t = health_[p].calls.totals(now);
      return t.calls < config_.min_calls ? 0.0 : t.failure_rate();
    }
  }
  return 0.0;
}

ProviderId Router::pick(Time now, ProviderMask tried) {
  const std::size_t n = health_.size();
  ProviderId best = kNoProvider;
  bool best_ejected = true;
  double best_score = 0.0;
  // Round robin starts at its turn; the others scan from 0 so ties go to the lowest id.
  const std::size_t start = config_.policy == RoutingPolicy::round_robin ? next_ : 0;
  for (std::size_t k = 0; k < n; ++k) {
    const auto p = static_cast<ProviderId>((start + k) % n);
    if ((tried >> p) & 1U) continue;
    const bool out = ejected(p, now);
    const double s = score(p, now);
    const bool better = best == kNoProvider || (best_ejected && !out) || (best_ejected == out && s < best_score);
    if (better) {
      best = p;
      best_ejected = out;
      best_score = s;
    }
  }
  if (best != kNoProvider && config_.policy == RoutingPolicy::round_robin) next_ = (best + 1U) % n;
  return best;
}

void Router::record(ProviderId p, Time now, bool failed) {
  Health& h = health_[p];
  h.calls.add(now, failed);
  if (config_.policy != RoutingPolicy::error_rate || ejected(p, now)) return;
  const WindowTotals t = h.calls.totals(now);
  if (t.calls >= config_.min_calls && t.failure_rate() > config_.max_error_rate) {
    h.ejected_until = now + config_.eject_for;
    h.calls.clear();  // judged afresh when it comes back
  }
}

void Router::observe(ProviderId p, Time now, SubmitClass outcome, Duration latency) {
  RELAYSIM_ASSERT(p < health_.size(), "a known provider");
  RELAYSIM_ASSERT(latency >= Duration::zero(), "a submit's latency is not negative");
  // A refusal of one message says nothing about the provider's health.
  if (outcome == SubmitClass::refused) return;
  const bool failed = outcome != SubmitClass::accepted;
  if (failed) {
    health_[p].ewma.observe_failure(now);
  } else {
    health_[p].ewma.observe(now, latency);
  }
  record(p, now, failed);
}

void Router::observe_receipt(ProviderId p, Time now, bool delivered) {
  RELAYSIM_ASSERT(p < health_.size(), "a known provider");
  record(p, now, !delivered);
}

}  // namespace relaysim::sms
