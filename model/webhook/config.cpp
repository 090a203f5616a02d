#include "model/webhook/config.h"

namespace relaysim::webhook {

// kMinRetryInterval as a scenario would write it: "1ms".
static std::string min_interval() {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(kMinRetryInterval).count()) + "ms";
}

std::vector<ConfigError> validate(const PlatformConfig& c) {
  std::vector<ConfigError> out;
  check(c.pods, PlatformConfig::kPods, "pods", out);
  check(c.concurrency_per_pod, PlatformConfig::kConcurrencyPerPod, "concurrency_per_pod", out);
  if (c.lookup_timeout <= Duration::zero()) out.push_back({"lookup_timeout", "must be positive"});
  if (c.http_timeout <= Duration::zero()) out.push_back({"http_timeout", "must be positive"});
  if (!c.allow_unsafe_lease && c.lease <= c.lookup_timeout + c.http_timeout) {
    out.push_back({"lease",
                   "must be longer than lookup_timeout + http_timeout (" +
                       format_duration(c.lookup_timeout + c.http_timeout) +
                       "): a lease that can expire while its attempt is still in flight lets "
                       "another pod start a second, duplicate delivery of the same request "
                       "(set allow_unsafe_lease: true to reproduce that on purpose)"});
  }
  check_backoff(c.retry.backoff, "retry", out);
  check_backoff(c.dependency_backoff, "dependency_backoff", out);
  if (c.retry.deadline <= Duration::zero()) out.push_back({"retry.deadline", "must be positive"});
  if (c.retry.retry_after_max < Duration::zero()) {
    out.push_back({"retry.retry_after_max", "must not be negative"});
  }
  if (c.url_cache_ttl < Duration::zero()) out.push_back({"url_cache.ttl", "must not be negative"});
  if (c.url_cache_max_entries < 1) out.push_back({"url_cache.max_entries", "must be at least 1"});
  validate(c.serviceb_breaker, "serviceb_breaker", out);
  if (c.store_retry < kMinRetryInterval) {
    out.push_back({"store_retry", "must be at least " + min_interval() +
                                               " (a shorter wait asks a failing store again in a busy loop)"});
  }
  if (c.retention && *c.retention < Duration::zero()) out.push_back({"retention", "must not be negative"});
  if (c.max_payload_bytes < kMinPayloadLimit) {
    out.push_back({"max_payload_bytes", "must be at least " + std::to_string(kMinPayloadLimit) +
                                                     " bytes: a smaller limit would refuse even a short JSON body"});
  }
  return out;
}

}  // namespace relaysim::webhook
