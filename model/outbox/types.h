// The outbox relay's nouns (seed 002): a Message — one `outbox_request` row, written by a business
// operation in its own transaction — its Status and Reason, the Record the relay publishes to the
// log for it, and the references that name a message across shards.
//
// Life of a message (every non-final status has a due time, `next_attempt`):
//
//   pending ──the shard's leader publishes a record and marks it──▶ processing
//      ▲                                                             │ a consumer re-locks it
//      │◀── finish: retry, with the next attempt date ───────────────┤ (status = processing and
//      │◀── the rescuer: processing past its next_attempt ───────────┤  attempt = the record's),
//      │                                                             │ handles it, and finishes:
//      │                                                  handled ◀──┤
//      │                                                  failed  ◀──┘ (rejected, or exhausted)
//
// While a message is processing its next_attempt is when its processing times out (the lease
// that the rescuer honours); while pending, when it may be published again. `attempt` counts the
// times it was marked processing: a record carries the attempt it was published for, and a
// consumer re-locks the message only under that attempt, so a stale or duplicate record changes
// nothing.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/core/lifecycle.h"
#include "model/core/names.h"
#include "model/core/time.h"

namespace relaysim::outbox {

using RowId = std::uint64_t;        // an outbox_request row's id within its shard, from 1
using ShardId = std::uint32_t;      // a database shard, from 0
using PodId = std::uint32_t;        // a pod of the service, from 1
using FenceToken = std::uint64_t;   // a leader's fencing token from the coordinator; 0: none
using EntityKey = std::uint64_t;    // the business entity a message is about (the log's key)

// A message named across shards: its shard in the top 16 bits, its row id below.
struct MessageRef {
  ShardId shard = 0;
  RowId id = 0;
  static constexpr int kShardShift = 48;
  std::uint64_t packed() const { return static_cast<std::uint64_t>(shard) << kShardShift | id; }
  static MessageRef unpack(std::uint64_t p) {
    return {static_cast<ShardId>(p >> kShardShift), p & ((std::uint64_t{1} << kShardShift) - 1)};
  }
  bool operator==(const MessageRef&) const = default;
};

// Non-final statuses first.
enum class Status : std::uint8_t { pending, processing, handled, failed };
constexpr bool is_final(Status s) { return s >= Status::handled; }
inline constexpr auto kStatusNames = names<Status>({
    {Status::pending, "pending"}, {Status::processing, "processing"}, {Status::handled, "handled"},
    {Status::failed, "failed"}});
constexpr std::string_view to_string(Status s) { return kStatusNames[s]; }
inline constexpr int kStatusCount = kStatusNames.count;

// The life of an outbox message (model/core/lifecycle.h): the relay makes only these moves, and
// the oracle holds every run to them (O-lifecycle). A final state is never left.
inline constexpr Move<Status> kMessageLifecycle[] = {
    {std::nullopt, Status::pending, "committed with its operation"},
    {Status::pending, Status::processing, "marked by its shard's leader, to publish"},
    {Status::processing, Status::handled, "a consumer handled it"},
    {Status::processing, Status::failed, "refused for good, or out of attempts (a consumer or the rescuer)"},
    {Status::processing, Status::pending, "a retry planned, or rescued: its processing timed out"},
};

// Why a message is failed (none otherwise).
enum class Reason : std::uint8_t {
  none,
  rejected,   // its handler refused it for good
  exhausted,  // its attempts ran out
};
inline constexpr auto kReasonNames = names<Reason>({
    {Reason::none, "none"}, {Reason::rejected, "rejected"}, {Reason::exhausted, "exhausted"}});
constexpr std::string_view to_string(Reason r) { return kReasonNames[r]; }
inline constexpr int kReasonCount = kReasonNames.count;

// One outbox_request row.
struct Message {
  RowId id = 0;
  std::uint32_t type = 0;     // index into the relay's message types (each with its retry policy)
  EntityKey key = 0;
  std::uint32_t bucket = 0;   // the entity's bucket: which shard it lives on
  std::uint64_t version = 0;  // the entity's version this message was written with (per-key order)
  Status status = Status::pending;
  Reason reason = Reason::none;
  std::uint16_t attempt = 0;  // times marked processing
  Time created_at{};
  Time next_attempt{};        // pending: when it may be published; processing: when it times out
  FenceToken fence = 0;       // the leader token it was last marked processing under
  bool operator==(const Message&) const = default;
};

// What the relay publishes to the log for one message: enough to re-lock it.
struct Record {
  ShardId shard = 0;
  RowId id = 0;
  std::uint16_t attempt = 0;  // the attempt the message is (or will be) processing under
  std::uint32_t type = 0;
  EntityKey key = 0;
  std::uint64_t version = 0;
  FenceToken fence = 0;       // the leader that published it
  Time created_at{};          // when its business transaction committed
  MessageRef ref() const { return {shard, id}; }
  bool operator==(const Record&) const = default;
};

// In which order the leader publishes a message and marks it processing (model/outbox/relay.h says
// what each order risks).
enum class PublishOrder : std::uint8_t { publish_then_mark, mark_then_publish };
inline constexpr auto kPublishOrderNames = names<PublishOrder>({
    {PublishOrder::publish_then_mark, "publish_then_mark"}, {PublishOrder::mark_then_publish, "mark_then_publish"}});
constexpr std::string_view to_string(PublishOrder o) { return kPublishOrderNames[o]; }

// What a configuration promises about one entity's messages.
enum class Ordering : std::uint8_t {
  none,     // any order; a key's messages may be handled at once
  per_key,  // a key's messages are handled one at a time in the order they were written
};
inline constexpr auto kOrderingNames = names<Ordering>({{Ordering::none, "none"}, {Ordering::per_key, "per_key"}});
constexpr std::string_view to_string(Ordering o) { return kOrderingNames[o]; }

}  // namespace relaysim::outbox
