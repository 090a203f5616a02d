#include "model/outbox/config.h"

#include "model/core/random.h"

namespace relaysim::outbox {

namespace {

void positive(Duration d, const std::string& key, std::vector<ConfigError>& out) {
  if (d <= Duration::zero()) out.push_back({key, "must be positive"});
}

}  // namespace

std::vector<ConfigError> validate(const RelayConfig& c) {
  std::vector<ConfigError> out;
  if (c.pods < 1 || c.pods > 1024) out.push_back({"platform.pods", "must be between 1 and 1024"});
  if (c.shards < 1 || c.shards > 256) out.push_back({"platform.shards", "must be between 1 and 256"});
  if (c.buckets < c.shards || c.buckets > 1'000'000) {
    out.push_back({"platform.buckets", "must be at least platform.shards and at most 1000000"});
  }
  positive(c.lease, "platform.lease", out);
  if (c.renew_every <= Duration::zero() || c.renew_every >= c.lease) {
    out.push_back({"platform.renew_every",
                   "must be positive and shorter than platform.lease, or a leader loses its lease between renewals"});
  }
  if (c.scan_every < kMinRetryInterval) out.push_back({"platform.scan_every", "must be at least 1ms"});
  if (c.batch < 1 || c.batch > 100'000) out.push_back({"platform.batch", "must be between 1 and 100000"});
  positive(c.publish_timeout, "platform.publish_timeout", out);
  if (c.publish_retries > 100) out.push_back({"platform.publish_retries", "must be at most 100"});
  positive(c.rescue_every, "platform.rescue_every", out);
  // A handling that outlives its processing timeout is rescued and published again while it
  // still runs: a second handling of the same message (the inbox keeps its effect single, but
  // the work is done twice), the outbox's form of a lease shorter than the work it covers.
  if (c.processing_timeout <= c.handle_timeout + c.relock_wait) {
    out.push_back({"platform.processing_timeout",
                   "must be longer than handle_timeout + relock_wait (" + format_duration(c.handle_timeout + c.relock_wait) +
                       "): a message whose processing times out while its handling still runs is published and "
                       "handled again"});
  }
  if (c.concurrency < 1 || c.concurrency > 100'000) out.push_back({"platform.concurrency", "must be between 1 and 100000"});
  if (c.max_poll_records < 1 || c.max_poll_records > 100'000) {
    out.push_back({"platform.max_poll_records", "must be between 1 and 100000"});
  }
  positive(c.handle_timeout, "platform.handle_timeout", out);
  if (c.relock_wait < Duration::zero()) out.push_back({"platform.relock_wait", "must not be negative"});
  if (c.types.empty() || c.types.size() > 64) out.push_back({"platform.types", "needs 1 to 64 message types"});
  for (std::size_t i = 0; i < c.types.size(); ++i) {
    const std::string key = "platform.types[" + std::to_string(i) + "]";
    if (c.types[i].max_attempts < 1) out.push_back({key + ".max_attempts", "must be at least 1"});
    check_backoff(c.types[i].backoff, key, out);
  }
  if (c.store_retry < kMinRetryInterval) {
    out.push_back({"platform.store_retry", "must be at least 1ms (a shorter wait asks a failing store again in a busy loop)"});
  }
  return out;
}

std::uint32_t bucket_of(EntityKey key, std::uint32_t buckets) {
  return static_cast<std::uint32_t>(mix64(key ^ 0x6275636b6574ULL) % buckets);
}

}  // namespace relaysim::outbox
