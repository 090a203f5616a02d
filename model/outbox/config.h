// RelayConfig: every policy knob of the outbox relay, with validation that explains itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/core/bounds.h"
#include "model/core/config_error.h"
#include "model/core/time.h"
#include "model/outbox/types.h"
#include "model/resilience/backoff.h"

namespace relaysim::outbox {

// A message type: its name, and how its failed handlings are retried.
struct TypePolicy {
  std::string name = "default";
  BackoffPolicy backoff{BackoffKind::exponential, std::chrono::seconds(1), 2.0, std::chrono::minutes(5), Jitter::full};
  std::uint16_t max_attempts = 10;  // handlings in all; then failed as exhausted
  bool operator==(const TypePolicy&) const = default;

  static constexpr Bounds<std::uint16_t> kMaxAttempts{1, 10'000};
};

struct RelayConfig {
  std::uint32_t pods = 3;
  // Database shards, and the buckets entities are spread over: bucket b lives on shard b % shards.
  std::uint32_t shards = 1;
  std::uint32_t buckets = 64;

  // The leader of each shard: its lease at the coordinator, renewed every renew_every.
  Duration lease = std::chrono::seconds(10);
  Duration renew_every = std::chrono::seconds(3);
  // Its scan: every scan_every (at once again while scans come back full), up to `batch` due
  // pending messages, published and marked processing in `order`.
  Duration scan_every = std::chrono::milliseconds(100);
  std::uint32_t batch = 1000;
  PublishOrder order = PublishOrder::publish_then_mark;
  Duration publish_timeout = std::chrono::seconds(2);
  std::uint32_t publish_retries = 2;  // a timed-out publish is repeated this often, in the same producer session
  // A processing message not finished by then goes back to pending: the rescuer, run by each
  // shard's leader every rescue_every. Must outlast a handling, or a slow handling is rescued and
  // published again while it still runs.
  Duration processing_timeout = std::chrono::minutes(1);
  Duration rescue_every = std::chrono::seconds(10);

  // Consumers: one per pod in the log's consumer group.
  std::uint32_t concurrency_per_pod = 64;  // records a pod handles at once
  std::uint32_t max_poll_records = 500;  // records one poll returns at most
  Duration handle_timeout = std::chrono::seconds(10);
  // How long a consumer waits for a message still pending under the attempt before the record's
  // (its leader published, and has not yet marked it: publish_then_mark) before it lets the record go.
  Duration relock_wait = std::chrono::seconds(5);
  Ordering ordering = Ordering::none;

  std::vector<TypePolicy> types{TypePolicy{}};
  // How long a pod leaves a failing shard alone after a call failed (busy, full, I/O).
  Duration store_retry = std::chrono::seconds(1);
  bool operator==(const RelayConfig&) const = default;

  // The bounds of each field, read by validate() and by the scenario schema.
  static constexpr Bounds<std::uint32_t> kPods = relaysim::kPods;
  static constexpr Bounds<std::uint32_t> kShards{1, 256};
  static constexpr Bounds<std::uint32_t> kBuckets{1, 1'000'000};  // and at least shards
  static constexpr Bounds<Duration> kLease = kPositiveDuration;
  static constexpr Bounds<Duration> kRenewEvery = kPeriod;        // and shorter than the lease
  static constexpr Bounds<Duration> kScanEvery = kPeriod;
  static constexpr Bounds<std::uint32_t> kBatch{1, 100'000};
  static constexpr Bounds<Duration> kPublishTimeout = kCallTimeout;
  static constexpr Bounds<std::uint32_t> kPublishRetries{0, 100};
  static constexpr Bounds<Duration> kProcessingTimeout = kPositiveDuration;
  static constexpr Bounds<Duration> kRescueEvery = kPeriod;
  static constexpr Bounds<std::uint32_t> kConcurrencyPerPod = kConcurrency;
  static constexpr Bounds<std::uint32_t> kMaxPollRecords{1, 100'000};
  static constexpr Bounds<Duration> kHandleTimeout = kCallTimeout;
  static constexpr Bounds<Duration> kRelockWait{Duration::zero(), std::chrono::hours(24)};
  static constexpr Bounds<Duration> kStoreRetry = kPeriod;
};

using relaysim::ConfigError;

// Every problem found, in a stable order; empty when the configuration is usable.
std::vector<ConfigError> validate(const RelayConfig& config);

// The bucket an entity lives in, and the shard of a bucket.
std::uint32_t bucket_of(EntityKey key, std::uint32_t buckets);
inline ShardId shard_of(std::uint32_t bucket, std::uint32_t shards) { return bucket % shards; }

}  // namespace relaysim::outbox
