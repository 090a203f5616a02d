// SimProviders: the SMS providers of a simulated world. Each submit's fate is drawn when it
// arrives, from the provider's spec and the seed: an outage, its rate limit (429), a refusal, a
// send whose answer is lost or late, or a plain accept after its latency (slowed down in its
// slowdown windows); and for what was sent, the delivery receipt to come.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/core/random.h"
#include "model/resilience/limiters.h"
#include "model/sms/submit.h"
#include "sim/sms/spec.h"
#include "sim/sms/truth.h"
#include "sim/world/distribution.h"

namespace relaysim::sim::sms {

struct ProviderAnswer {
  Fate fate = Fate::accepted;
  relaysim::sms::SubmitClass seen = relaysim::sms::SubmitClass::accepted;  // what the gateway learns
  Time answer_at{};                                                        // when it learns it
  bool receipt = false;                                                    // a receipt will come
  Time receipt_at{};
  bool delivered = false;
};

class SimProviders {
 public:
  SimProviders(const std::vector<ProviderSpec>& specs, std::uint64_t seed);
  std::size_t count() const { return providers_.size(); }
  ProviderAnswer submit(ProviderId provider, Time now, Duration timeout);

 private:
  struct Provider {
    const ProviderSpec* spec;
    Latency latency;
    Latency receipt_delay;
    std::optional<Limiter> rate;  // its own mps, a token bucket of one second's worth
    Rng rng;
  };
  std::vector<Provider> providers_;
};

}  // namespace relaysim::sim::sms
