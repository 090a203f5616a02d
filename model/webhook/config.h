// PlatformConfig: every policy knob of the webhook platform, with validation that explains itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/core/bounds.h"
#include "model/core/config_error.h"
#include "model/core/time.h"
#include "model/resilience/backoff.h"
#include "model/resilience/breaker.h"
#include "model/webhook/classifier.h"
#include "model/webhook/retry.h"

namespace relaysim::webhook {

using relaysim::kMinRetryInterval;

// The smallest max_payload_bytes: the simulated clients send payloads of up to 64 bytes, and a
// real client's shortest JSON body is not much shorter.
inline constexpr std::size_t kMinPayloadLimit = 64;

struct PlatformConfig {
  std::uint32_t pods = 1;
  std::uint32_t concurrency_per_pod = 64;
  // A claim's lease. It must outlast a whole attempt (URL lookup + HTTP call), or a second pod
  // rescues a request whose first attempt is still in flight: a duplicate delivery.
  Duration lease = std::chrono::minutes(2);
  // Skips the lease check below. Only for reproducing the duplicate-delivery bug on purpose.
  bool allow_unsafe_lease = false;
  Duration lookup_timeout = std::chrono::seconds(2);
  Duration http_timeout = std::chrono::seconds(30);
  RetryPolicy retry{};
  // Backoff for requests blocked on ServiceB (not delivery attempts, still bound by the deadline).
  BackoffPolicy dependency_backoff{BackoffKind::exponential, std::chrono::seconds(5), 2.0,
                                   std::chrono::minutes(5), Jitter::full};
  Duration url_cache_ttl = std::chrono::minutes(2);
  std::size_t url_cache_max_entries = 100'000;
  BreakerConfig serviceb_breaker{};
  // How long a pod waits before it asks the store again after a call failed (busy, full, I/O).
  Duration store_retry = std::chrono::seconds(1);
  ClassificationTable classification{};
  std::size_t max_payload_bytes = 256 * 1024;
  std::size_t max_key_bytes = 256;  // cxid and request_id each
  // How long a terminal request (and its idempotency key) is kept; nullopt: forever. Past it a
  // repeated create makes a new request. Long runs set it so memory follows the open requests.
  std::optional<Duration> retention;
  bool operator==(const PlatformConfig&) const = default;

  // The bounds of fields validate() and the scenario schema both read.
  static constexpr Bounds<std::uint32_t> kPods = relaysim::kPods;
  static constexpr Bounds<std::uint32_t> kConcurrencyPerPod = kConcurrency;
};

using relaysim::ConfigError;

// Every problem found, in a stable order; empty when the configuration is usable.
std::vector<ConfigError> validate(const PlatformConfig& config);

}  // namespace relaysim::webhook
