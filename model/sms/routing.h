// Router: which provider a submit goes to, and which is next when one certainly refused.
//
// Policies:
//  - round_robin: providers in turn.
//  - ewma: the lowest peak-EWMA response time (model/resilience/ewma.h), with a failure penalty
//    (so a provider that fails fast does not attract the traffic) and a default for providers
//    with no history.
//  - error_rate: the lowest failure rate over a sliding window; a provider whose rate passes
//    `max_error_rate` with at least `min_calls` in the window is ejected for `eject_for` (a
//    minimum volume and a dwell, so one bad call does not make the choice flap).
// Every policy skips the providers a message already tried within its claim (`tried`, a bit per
// provider) and, while another is available, ejected ones; when only ejected providers are left,
// the least bad is tried (a panic mode, as Envoy's) rather than none. Ties go to the lowest id,
// so the choice is deterministic. Submit results and delivery receipts both feed the health an
// ewma or error_rate choice reads (an undelivered or missing receipt counts as a failure).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/core/names.h"
#include "model/resilience/ewma.h"
#include "model/resilience/window_counter.h"
#include "model/sms/submit.h"

namespace relaysim::sms {

enum class RoutingPolicy : std::uint8_t { round_robin, ewma, error_rate };
inline constexpr auto kRoutingPolicyNames = names<RoutingPolicy>({
    {RoutingPolicy::round_robin, "round_robin"}, {RoutingPolicy::ewma, "ewma"},
    {RoutingPolicy::error_rate, "error_rate"}});
constexpr std::string_view to_string(RoutingPolicy p) { return kRoutingPolicyNames[p]; }

struct RoutingConfig {
  RoutingPolicy policy = RoutingPolicy::round_robin;
  EwmaConfig ewma;
  Duration window = std::chrono::seconds(30);
  std::uint32_t min_calls = 20;
  double max_error_rate = 0.5;
  Duration eject_for = std::chrono::seconds(30);
  bool operator==(const RoutingConfig&) const = default;
};

using ProviderMask = std::uint64_t;  // bit p: provider p
inline constexpr std::size_t kMaxProviders = 64;

class Router {
 public:
  Router(const RoutingConfig& config, std::size_t providers);

  // The provider for the next submit, or kNoProvider when every provider is in `tried`.
  ProviderId pick(Time now, ProviderMask tried);
  void observe(ProviderId p, Time now, SubmitClass outcome, Duration latency);
  void observe_receipt(ProviderId p, Time now, bool delivered);

  bool ejected(ProviderId p, Time now) const { return now < health_[p].ejected_until; }
  double estimate_ns(ProviderId p) const { return health_[p].ewma.estimate_ns(); }
  WindowTotals window(ProviderId p, Time now) const { return health_[p].calls.totals(now); }
  std::size_t providers() const { return health_.size(); }

 private:
  struct Health {
    PeakEwma ewma;
    WindowCounter calls;
    Time ejected_until{};
  };
  void record(ProviderId p, Time now, bool failed);
  // Lower is better; the policy's measure of a provider now.
  double score(ProviderId p, Time now) const;

  RoutingConfig config_;
  std::vector<Health> health_;
  std::size_t next_ = 0;  // round robin: where the turn is
};

}  // namespace relaysim::sms
