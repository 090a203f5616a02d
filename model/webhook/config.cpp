#include "model/webhook/config.h"

namespace relaysim::webhook {

// kMinRetryInterval as a scenario would write it: "1ms".
static std::string min_interval() {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(kMinRetryInterval).count()) + "ms";
}

std::vector<ConfigError> validate(const PlatformConfig& c) {
  std::vector<ConfigError> out;
  if (c.pods < 1 || c.pods > 1024) out.push_back({"platform.pods", "must be between 1 and 1024"});
  if (c.concurrency_per_pod < 1 || c.concurrency_per_pod > 100'000) {
    out.push_back({"platform.concurrency_per_pod", "must be between 1 and 100000"});
  }
  if (c.lookup_timeout <= Duration::zero()) out.push_back({"platform.lookup_timeout", "must be positive"});
  if (c.http_timeout <= Duration::zero()) out.push_back({"platform.http_timeout", "must be positive"});
  if (!c.allow_unsafe_lease && c.lease <= c.lookup_timeout + c.http_timeout) {
    out.push_back({"platform.lease",
                   "must be longer than lookup_timeout + http_timeout (" +
                       format_duration(c.lookup_timeout + c.http_timeout) +
                       "): a lease that can expire while its attempt is still in flight lets "
                       "another pod start a second, duplicate delivery of the same request "
                       "(set allow_unsafe_lease: true to reproduce that on purpose)"});
  }
  check_backoff(c.retry.backoff, "platform.retry", out);
  check_backoff(c.dependency_backoff, "platform.dependency_backoff", out);
  if (c.retry.deadline <= Duration::zero()) out.push_back({"platform.retry.deadline", "must be positive"});
  if (c.retry.retry_after_max < Duration::zero()) {
    out.push_back({"platform.retry.retry_after_max", "must not be negative"});
  }
  if (c.url_cache_ttl < Duration::zero()) out.push_back({"platform.url_cache.ttl", "must not be negative"});
  if (c.url_cache_max_entries < 1) out.push_back({"platform.url_cache.max_entries", "must be at least 1"});
  const BreakerConfig& b = c.serviceb_breaker;
  if (b.window <= Duration::zero()) out.push_back({"platform.serviceb_breaker.window", "must be positive"});
  if (!(b.failure_rate > 0.0 && b.failure_rate <= 1.0)) {
    out.push_back({"platform.serviceb_breaker.failure_rate", "must be in (0%, 100%]"});
  }
  if (b.min_calls < 1) out.push_back({"platform.serviceb_breaker.min_calls", "must be at least 1"});
  if (b.open_for <= Duration::zero()) out.push_back({"platform.serviceb_breaker.open_for", "must be positive"});
  if (b.half_open_probes < 1) {
    out.push_back({"platform.serviceb_breaker.half_open_probes", "must be at least 1"});
  }
  if (c.store_retry < kMinRetryInterval) {
    out.push_back({"platform.store_retry", "must be at least " + min_interval() +
                                               " (a shorter wait asks a failing store again in a busy loop)"});
  }
  if (c.retention && *c.retention < Duration::zero()) out.push_back({"platform.retention", "must not be negative"});
  if (c.max_payload_bytes < kMinPayloadLimit) {
    out.push_back({"platform.max_payload_bytes", "must be at least " + std::to_string(kMinPayloadLimit) +
                                                     " bytes: a smaller limit would refuse even a short JSON body"});
  }
  return out;
}

}  // namespace relaysim::webhook
