// Events: what the outbox relay's model tells its observers (see model/core/events.h). The model
// works with no sink attached; the simulator's oracle, metrics and fingerprint attach here. Each
// event's `mix` says what of it counts towards a run's fingerprint.
#pragma once

#include <span>

#include "model/core/events.h"
#include "model/core/names.h"
#include "model/outbox/ports.h"
#include "model/outbox/store.h"
#include "model/outbox/types.h"
#include "model/store/store_error.h"

namespace relaysim::outbox {

// A business operation committed (its messages exist from now) or rolled back (they never did).
struct OperationDone {
  PodId pod;
  ShardId shard;
  EntityKey key;
  std::uint64_t version;
  RowId first;                           // its first message (the others follow)
  std::span<const std::uint32_t> types;  // one per message it wrote
  bool committed;
  Time at;
  std::uint32_t count() const { return static_cast<std::uint32_t>(types.size()); }
  void mix(Fingerprint& fp) const {
    fp.mix(60);
    fp.mix(static_cast<std::uint64_t>(shard) << 40 ^ first << 1 ^ (committed ? 1U : 0U));
    fp.mix(key);
  }
};

// A pod started or stopped believing it leads a shard. `until`, when it starts: the end of the
// lease as the pod counts it (not part of the fingerprint: it follows from the run's events).
struct LeadershipChanged {
  PodId pod;
  ShardId shard;
  FenceToken token;
  bool leading;
  Time at;
  Time until{};
  void mix(Fingerprint& fp) const {
    fp.mix(61);
    fp.mix(static_cast<std::uint64_t>(pod) << 40 ^ static_cast<std::uint64_t>(shard) << 1 ^ (leading ? 1U : 0U));
    fp.mix(token);
  }
};

enum class LeaderWrite : std::uint8_t { fence, scan, mark, rescue };
inline constexpr auto kLeaderWriteNames = names<LeaderWrite>({
    {LeaderWrite::fence, "fence"}, {LeaderWrite::scan, "scan"}, {LeaderWrite::mark, "mark"},
    {LeaderWrite::rescue, "rescue"}});
constexpr std::string_view to_string(LeaderWrite w) { return kLeaderWriteNames[w]; }
inline constexpr int kLeaderWriteCount = kLeaderWriteNames.count;

// A leader's write reached its shard: applied under its token, or refused as stale (fenced out).
// `messages`: what it read or changed (scan: as read, or as marked; mark: as marked; rescue: as
// rescued).
struct LeaderWrote {
  PodId pod;
  ShardId shard;
  FenceToken token;
  LeaderWrite write;
  bool applied;
  std::span<const Message> messages;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(62);
    fp.mix(static_cast<std::uint64_t>(shard) << 40 ^ static_cast<std::uint64_t>(write) << 8 ^ (applied ? 1U : 0U));
    fp.mix(token);
    fp.mix(messages.size());
  }
};

// A produce was answered (`attempt`: 0 for the first try, then its repeats).
struct Published {
  PodId pod;
  ShardId shard;
  ProducerId producer;
  std::uint32_t partition;
  std::uint64_t first_sequence;
  std::span<const Record> records;
  Produced outcome;
  std::uint32_t attempt;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(63);
    fp.mix(static_cast<std::uint64_t>(partition) << 32 ^ first_sequence << 4 ^ static_cast<std::uint64_t>(outcome));
    fp.mix(records.size());
  }
};

// A consumer re-locked (or failed to re-lock) the message of a delivery; `row` as it found it.
struct Relocked {
  PodId pod;
  const Delivery& delivery;
  Relock outcome;
  const Message& row;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(64);
    fp.mix(delivery.record.ref().packed() << 2 ^ static_cast<std::uint64_t>(outcome));
  }
};

// A consumer's handling of a record came back.
struct HandleDone {
  PodId pod;
  const Record& record;
  Handled outcome;
  Time started;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(65);
    fp.mix(record.ref().packed() << 2 ^ static_cast<std::uint64_t>(outcome));
  }
};

// A consumer finished a message (applied: it was still processing under the record's attempt).
struct Finished {
  PodId pod;
  const Record& record;
  const Finish& finish;
  bool applied;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(66);
    fp.mix(record.ref().packed() << 4 ^ static_cast<std::uint64_t>(finish.status) << 1 ^ (applied ? 1U : 0U));
    fp.mix(finish.next_attempt);
  }
};

// A consumer is done with a delivery (finished its message, or let the record go).
struct Consumed {
  PodId pod;
  std::uint32_t partition;
  std::uint64_t offset;
  Time at;
};

// A consumer committed its group's offsets of a poll's partitions (`generation`: its assignment's).
struct OffsetsCommitted {
  PodId pod;
  std::uint64_t generation;
  std::uint32_t partition;
  std::uint64_t offset;
  Time at;
};

// A poll came back to a consumer.
struct Polled {
  PodId pod;
  std::uint32_t records;
  bool evicted;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(67);
    fp.mix(static_cast<std::uint64_t>(records) << 1 ^ (evicted ? 1U : 0U));
  }
};

struct StoreFailed {
  PodId pod;
  ShardId shard;
  StoreFailure failure;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(68);
    fp.mix(static_cast<std::uint64_t>(shard) << 8 ^ static_cast<std::uint64_t>(failure));
  }
};

using Events = EventBus<OperationDone, LeadershipChanged, LeaderWrote, Published, Relocked, HandleDone, Finished, Consumed,
                        OffsetsCommitted, Polled, StoreFailed>;

}  // namespace relaysim::outbox
