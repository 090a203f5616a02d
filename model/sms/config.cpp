#include "model/sms/config.h"

#include "model/core/assert.h"

namespace relaysim::sms {

namespace {

void positive(Duration d, const char* key, std::vector<ConfigError>& out) {
  if (d <= Duration::zero()) out.push_back({key, "must be positive"});
}

}  // namespace

SharedLimitConfig cluster_limit_config(const PlatformConfig& config) {
  RELAYSIM_ASSERT(config.cluster_limit.has_value(), "the platform has a cluster limit");
  SharedLimitConfig c = *config.cluster_limit;
  c.pods = config.pods;
  return c;
}

SharedLimitConfig business_limit_config(const PlatformConfig& config, const LimiterSpec& spec) {
  SharedLimitConfig c = config.cluster_limit.value_or(SharedLimitConfig{});
  c.spec = spec;
  c.pods = config.pods;
  return c;
}

std::vector<ConfigError> validate(const PlatformConfig& c, std::size_t providers) {
  std::vector<ConfigError> out;
  check(c.pods, PlatformConfig::kPods, "pods", out);
  check(c.concurrency_per_pod, PlatformConfig::kConcurrencyPerPod, "concurrency_per_pod", out);
  positive(c.send_timeout, "send_timeout", out);
  // A claim submits at most once per provider before it retries: the lease must outlast that, or
  // a second pod rescues a message whose submit is still in flight and sends it twice.
  const Duration claim_work = c.send_timeout * static_cast<std::int64_t>(std::max<std::size_t>(providers, 1));
  if (c.lease <= claim_work) {
    out.push_back({"lease", "must be longer than send_timeout × providers (" + format_duration(claim_work) +
                                         "): a lease that expires while its claim's submits are still in flight "
                                         "lets another pod send the same message again"});
  }
  positive(c.receipt_timeout, "receipt_timeout", out);
  positive(c.validity, "validity", out);
  if (c.store_retry < kMinRetryInterval) {
    out.push_back({"store_retry", "must be at least 1ms (a shorter wait asks a failing store again in a busy loop)"});
  }
  positive(c.quota_period, "quota_period", out);
  check(c.token_lifetime, PlatformConfig::kTokenLifetime, "token_lifetime", out);
  if (providers > kMaxProviders) out.push_back({"providers", "at most 64 providers"});
  const RoutingConfig& r = c.routing;
  validate(r.ewma, "routing", out);
  positive(r.window, "routing.window", out);
  positive(r.eject_for, "routing.eject_for", out);
  if (!(r.max_error_rate > 0.0 && r.max_error_rate <= 1.0)) {
    out.push_back({"routing.max_error_rate", "must be in (0%, 100%]"});
  }
  const SyncAsyncConfig& s = c.sync_to_async;
  positive(s.latency.window, "sync_to_async.latency.window", out);
  positive(s.error_rate.window, "sync_to_async.error_rate.window", out);
  if (s.exit == SyncAsyncConfig::Exit::after) positive(s.after, "sync_to_async.after", out);
  check(s.probe_every, SyncAsyncConfig::kProbeEvery, "sync_to_async.probe_every", out);
  check(s.min_probes, SyncAsyncConfig::kMinProbes, "sync_to_async.min_probes", out);
  const MarketingConfig& m = c.marketing;
  if (m.quiet_hours.from < 0 || m.quiet_hours.from >= kMinutesPerDay || m.quiet_hours.to < 0 ||
      m.quiet_hours.to >= kMinutesPerDay) {
    out.push_back({"marketing.quiet_hours", "must be times of day from 00:00 to 23:59"});
  }
  if (m.cap.count > 0) positive(m.cap.per, "marketing.frequency_cap.per", out);
  check(m.chunk, MarketingConfig::kChunk, "marketing.chunk", out);
  positive(m.every, "marketing.every", out);
  if (c.cluster_limit) validate(*c.cluster_limit, "limit", out);
  return out;
}

std::vector<ConfigError> validate(const BusinessPolicy& b) {
  std::vector<ConfigError> out;
  check_backoff(b.retry.backoff, "retry", out);
  check(b.retry.max_attempts, RetryPolicy::kMaxAttempts, "retry.max_attempts", out);
  check(b.retry.alert_after, RetryPolicy::kAlertAfter, "retry.alert_after", out);
  if (b.limit) validate(*b.limit, "limit", out);
  return out;
}

}  // namespace relaysim::sms
