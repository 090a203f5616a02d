// PlatformConfig: every policy knob of the SMS gateway, with validation that explains itself.
// Each business's own policies (its retry and its send rate) are a BusinessPolicy; the platform's
// apply to every message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/core/bounds.h"
#include "model/core/config_error.h"
#include "model/core/time.h"
#include "model/resilience/shared_limiter.h"
#include "model/sms/marketing.h"
#include "model/sms/routing.h"
#include "model/sms/submit.h"
#include "model/sms/sync_async.h"

namespace relaysim::sms {

struct PlatformConfig {
  std::uint32_t pods = 2;
  // Messages a pod's async workers submit at once (sync sends, made in a client's request, are
  // bounded by the clients).
  std::uint32_t concurrency_per_pod = 64;
  // One submit's timeout: past it the outcome is ambiguous (`unknown`).
  Duration send_timeout = std::chrono::seconds(5);
  // A claim's lease: it must outlast every submit a claim can make (one per provider, when each
  // certainly refuses), or a second pod rescues a message whose submit is still in flight.
  Duration lease = std::chrono::minutes(1);
  // How long a provider's delivery receipt may take; a submitted message with none by then ends
  // `unconfirmed`.
  Duration receipt_timeout = std::chrono::minutes(10);
  // How long after its send_at a message may still go out; past it, it fails as `expired`.
  Duration validity = std::chrono::hours(24);
  OnUnknown on_unknown = OnUnknown::resend;
  // How long a pod leaves the store alone after a call failed (busy, full, I/O).
  Duration store_retry = std::chrono::seconds(1);
  Duration quota_period = std::chrono::hours(24 * 30);
  Duration token_lifetime = std::chrono::hours(24);
  RoutingConfig routing{};
  SyncAsyncConfig sync_to_async{};
  // A limit on the whole cluster's submits, shared through the key-value store; `pods` in it is
  // set from `pods`.
  std::optional<SharedLimitConfig> cluster_limit;
  // Quiet hours, the frequency cap and how campaigns are expanded (model/sms/marketing.h).
  MarketingConfig marketing{};
  bool operator==(const PlatformConfig&) const = default;

  // The bounds of fields validate() and the scenario schema both read.
  static constexpr Bounds<std::uint32_t> kPods = relaysim::kPods;
  static constexpr Bounds<std::uint32_t> kConcurrencyPerPod = kConcurrency;
  // A token's expiry claim counts whole seconds (a JWT's NumericDate): a shorter lifetime makes
  // every token expired when it is issued.
  static constexpr Bounds<Duration> kTokenLifetime{std::chrono::seconds(1), kLongestDuration, false,
                                                   "a token's expiry counts whole seconds"};
};

// A business's own policies.
struct BusinessPolicy {
  RetryPolicy retry{};
  // Its submits per window across the cluster, shared through the key-value store (with the
  // platform's cluster limit's down policy, timeout and breaker).
  std::optional<LimiterSpec> limit;
  bool operator==(const BusinessPolicy&) const = default;
};

// The policy of a business no list names: the defaults.
inline const BusinessPolicy kDefaultBusinessPolicy{};

// The shared limits as a pod runs them: the cluster's (when the platform has one), and a
// business's own `limit` with the cluster limit's down policy, timeout and breaker. Both are
// shared among the platform's `pods`.
SharedLimitConfig cluster_limit_config(const PlatformConfig& config);
SharedLimitConfig business_limit_config(const PlatformConfig& config, const LimiterSpec& spec);

using relaysim::ConfigError;

// Every problem found, in a stable order; empty when the configuration is usable. `providers`:
// how many providers the platform routes among.
std::vector<ConfigError> validate(const PlatformConfig& config, std::size_t providers);
// The same for one business's policy.
std::vector<ConfigError> validate(const BusinessPolicy& policy);

}  // namespace relaysim::sms
