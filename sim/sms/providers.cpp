#include "sim/sms/providers.h"

#include <cmath>
#include <string>

#include "model/core/assert.h"

namespace relaysim::sim::sms {

using relaysim::sms::SubmitClass;

namespace {

// A refusal comes back fast: about a tenth of the provider's usual latency.
constexpr double kRefusalShare = 0.1;

std::optional<Limiter> rate_of(const ProviderSpec& p) {
  if (p.mps <= 0) return std::nullopt;
  // A token bucket of one second's worth, refilled at mps (an integer limit per second).
  RELAYSIM_ASSERT(ProviderSpec::kMps.holds(p.mps), "mps within its bounds");
  const auto per_second = static_cast<std::uint32_t>(std::max(1.0, std::ceil(p.mps)));
  return Limiter(LimiterSpec{LimiterAlgorithm::token_bucket, per_second, std::chrono::seconds(1), per_second});
}

}  // namespace

SimProviders::SimProviders(const std::vector<ProviderSpec>& specs, std::uint64_t seed) {
  providers_.reserve(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const ProviderSpec& s = specs[i];
    providers_.push_back(Provider{&s, Latency(s.latency), Latency(s.receipts.delay), rate_of(s),
                                  Rng::derive(seed, "provider/" + std::to_string(i))});
  }
}

ProviderAnswer SimProviders::submit(ProviderId id, Time now, Duration timeout) {
  RELAYSIM_ASSERT(id < providers_.size(), "a provider of the world");
  RELAYSIM_ASSERT(timeout > Duration::zero(), "a submit has a timeout");
  Provider& p = providers_.at(id);
  const ProviderSpec& s = *p.spec;
  ProviderAnswer a;
  const Duration latency = scale(p.latency.sample(p.rng), slowdown_at(s.slowdowns, now));
  const Duration fast = scale(latency, kRefusalShare);
  auto refuse = [&](Fate fate, SubmitClass seen) {
    a.fate = fate;
    a.seen = seen;
    a.answer_at = now + std::min(fast, timeout);
    return a;
  };
  for (const Outage& o : s.outages) {
    if (!o.window.contains(now)) continue;
    if (o.mode == OutageMode::error) return refuse(Fate::unavailable, SubmitClass::unavailable);
    a.fate = Fate::swallowed;
    a.seen = SubmitClass::timeout;
    a.answer_at = now + timeout;
    return a;
  }
  const double draw = p.rng.uniform01();
  if (p.rate && !p.rate->take(now).admitted) return refuse(Fate::throttled, SubmitClass::throttled);
  if (draw < s.error_rate) return refuse(Fate::unavailable, SubmitClass::unavailable);
  if (draw < s.error_rate + s.refusal_rate) return refuse(Fate::refused, SubmitClass::refused);
  // Sent.
  const Time accepted_at = now + std::min(latency, timeout);
  if (p.rng.chance(s.lost_answers)) {
    a.fate = Fate::answer_lost;
    a.seen = SubmitClass::timeout;
    a.answer_at = now + timeout;
  } else if (latency > timeout) {
    a.fate = Fate::late;
    a.seen = SubmitClass::timeout;
    a.answer_at = now + timeout;
  } else {
    a.fate = Fate::accepted;
    a.seen = SubmitClass::accepted;
    a.answer_at = now + latency;
  }
  RELAYSIM_ASSERT(a.answer_at <= now + timeout, "an answer comes by the timeout");
  a.receipt = !p.rng.chance(s.receipts.lost);
  a.delivered = !p.rng.chance(s.receipts.undelivered);
  a.receipt_at = accepted_at + p.receipt_delay.sample(p.rng);
  return a;
}

}  // namespace relaysim::sim::sms
