// The outbox relay's own ports: the partitioned log (Kafka) its leaders publish to and its
// consumers read from, and the downstream its consumers' handling changes. The lease service a
// leader is elected by is the generic Coordinator (model/core/coordinator.h).
//
// The simulator implements them in virtual time with seeded faults (sim/outbox/log.h,
// sim/outbox/downstream.h). Every callback is called at most once, never inline, and never after
// the caller's process has died.
#pragma once

#include <cstdint>
#include <span>

#include "model/core/function.h"
#include "model/core/http.h"
#include "model/core/names.h"
#include "model/core/time.h"
#include "model/outbox/types.h"

namespace relaysim::outbox {

using ProducerId = std::uint64_t;  // an idempotent producer session
using MemberId = std::uint64_t;    // a member of the consumer group

enum class Produced : std::uint8_t {
  ok,           // written (or a repeat of a sequence its producer already wrote: not written twice)
  unavailable,  // certainly not written (the broker refused it)
  timeout,      // no answer in time: it may or may not be written
};
inline constexpr auto kProducedNames = names<Produced>({
    {Produced::ok, "ok"}, {Produced::unavailable, "unavailable"}, {Produced::timeout, "timeout"}});
constexpr std::string_view to_string(Produced p) { return kProducedNames[p]; }

// A record as a consumer receives it.
struct Delivery {
  std::uint32_t partition = 0;
  std::uint64_t offset = 0;
  Record record;
};

// What a poll returns: records of the member's partitions under its assignment's generation, or
// word that the member was evicted (it must join again; its partitions went to others).
struct Poll {
  std::uint64_t generation = 0;
  bool evicted = false;
  std::span<const Delivery> deliveries;
};

class Log {
 public:
  virtual ~Log() = default;
  using ProduceCallback = InplaceFunction<void(Produced), 48>;
  using PollCallback = InplaceFunction<void(const Poll&), 48>;

  virtual std::uint32_t partitions() const = 0;
  // The partition of an entity: one key's records stay in one partition, in order.
  std::uint32_t partition_of(EntityKey key) const;

  // A new idempotent producer session (Kafka's InitProducerId): within it, the log writes each
  // (partition, sequence) at most once, so repeating a timed-out produce with the same sequence
  // cannot duplicate it. A new session starts a new sequence space: it does not dedup against
  // an old one.
  virtual ProducerId open_producer() = 0;
  // Appends `records`, in order, to `partition` under sequences first_sequence, first_sequence+1...
  virtual void produce(ProducerId producer, std::uint32_t partition, std::span<const Record> records,
                       std::uint64_t first_sequence, Duration timeout, ProduceCallback done) = 0;

  // The consumer group. join() makes a new member (a rebalance follows); poll() is answered with
  // the member's next records once there are some, or empty after `wait`. A member that does not
  // poll again within the group's max poll interval is evicted and its partitions are resumed by
  // others from their committed offsets. commit() records `offset` (the next to read) of
  // `partition` for the group, if the member still holds the partition in `generation`.
  virtual MemberId join() = 0;
  virtual void leave(MemberId member) = 0;
  virtual void poll(MemberId member, std::uint32_t max_records, Duration wait, PollCallback done) = 0;
  virtual void commit(MemberId member, std::uint64_t generation, std::uint32_t partition, std::uint64_t offset) = 0;
};

enum class Handled : std::uint8_t {
  done,      // the effect is applied (now, or by an earlier delivery: the inbox said so)
  failed,    // certainly not applied; may be tried again
  rejected,  // the downstream refused the message for good
  timeout,   // no answer in time: it may or may not be applied
};
inline constexpr auto kHandledNames = names<Handled>({
    {Handled::done, "done"}, {Handled::failed, "failed"}, {Handled::rejected, "rejected"},
    {Handled::timeout, "timeout"}});
constexpr std::string_view to_string(Handled h) { return kHandledNames[h]; }
inline constexpr int kHandledCount = kHandledNames.count;

// What an answer over HTTP from a downstream means (the live shell's downstream, live/outbox/):
// 2xx applied; 408, 429 and 5xx failed, to be tried again; any other 4xx rejected for good; no
// answer in time a timeout; no connection at all failed (nothing reached it).
Handled classify_handled(NetError error, int status);

// The downstream a consumer's handling changes (its effect goes through the inbox there:
// model/outbox/inbox.h).
class Downstream {
 public:
  virtual ~Downstream() = default;
  using HandleCallback = InplaceFunction<void(Handled), 48>;
  virtual void handle(const Record& record, Duration timeout, HandleCallback done) = 0;
};

}  // namespace relaysim::outbox
