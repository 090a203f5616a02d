#include "model/outbox/config.h"

#include "model/core/assert.h"
#include "model/core/random.h"

namespace relaysim::outbox {

std::vector<ConfigError> validate(const RelayConfig& c) {
  std::vector<ConfigError> out;
  check(c.pods, RelayConfig::kPods, "pods", out);
  check(c.shards, RelayConfig::kShards, "shards", out);
  check(c.buckets, RelayConfig::kBuckets, "buckets", out);
  if (c.buckets < c.shards) out.push_back({"buckets", "must be at least shards (" + std::to_string(c.shards) + ")"});
  check(c.lease, RelayConfig::kLease, "lease", out);
  check(c.renew_every, RelayConfig::kRenewEvery, "renew_every", out);
  if (c.renew_every >= c.lease) {
    out.push_back({"renew_every", "must be shorter than lease, or a leader loses its lease between renewals"});
  }
  check(c.scan_every, RelayConfig::kScanEvery, "scan_every", out);
  check(c.batch, RelayConfig::kBatch, "batch", out);
  check(c.publish_timeout, RelayConfig::kPublishTimeout, "publish_timeout", out);
  check(c.publish_retries, RelayConfig::kPublishRetries, "publish_retries", out);
  check(c.processing_timeout, RelayConfig::kProcessingTimeout, "processing_timeout", out);
  check(c.rescue_every, RelayConfig::kRescueEvery, "rescue_every", out);
  // A handling that outlives its processing timeout is rescued and published again while it
  // still runs: a second handling of the same message (the inbox keeps its effect single, but
  // the work is done twice), the outbox's form of a lease shorter than the work it covers.
  if (c.processing_timeout <= c.handle_timeout + c.relock_wait) {
    out.push_back({"processing_timeout",
                   "must be longer than handle_timeout + relock_wait (" + format_duration(c.handle_timeout + c.relock_wait) +
                       "): a message whose processing times out while its handling still runs is published and "
                       "handled again"});
  }
  check(c.concurrency_per_pod, RelayConfig::kConcurrencyPerPod, "concurrency_per_pod", out);
  check(c.max_poll_records, RelayConfig::kMaxPollRecords, "max_poll_records", out);
  check(c.handle_timeout, RelayConfig::kHandleTimeout, "handle_timeout", out);
  check(c.relock_wait, RelayConfig::kRelockWait, "relock_wait", out);
  if (c.types.empty() || c.types.size() > 64) out.push_back({"types", "needs 1 to 64 message types"});
  for (std::size_t i = 0; i < c.types.size(); ++i) {
    const std::string key = "types[" + std::to_string(i) + "]";
    check(c.types[i].max_attempts, TypePolicy::kMaxAttempts, key + ".max_attempts", out);
    check_backoff(c.types[i].backoff, key, out);
  }
  check(c.store_retry, RelayConfig::kStoreRetry, "store_retry", out);
  return out;
}

std::uint32_t bucket_of(EntityKey key, std::uint32_t buckets) {
  RELAYSIM_ASSERT(buckets > 0, "entities are spread over at least one bucket");
  return static_cast<std::uint32_t>(mix64(key ^ 0x6275636b6574ULL) % buckets);
}

}  // namespace relaysim::outbox
