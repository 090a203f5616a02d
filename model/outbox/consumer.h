// Consumer: one pod's member of the log's consumer group — it polls records, handles each
// message, finishes it in its shard, and commits, per partition, the offsets of the records done.
//
// One record, as the seed does it:
//  1. re-lock: the message must be processing under the record's attempt (Store::relock). A
//     record for a message that moved on — handled, failed, rescued and published again — is let
//     go; one whose leader has published and not yet marked it (publish_then_mark) is waited for,
//     up to relock_wait, and then let go (the message is published again if it stays pending).
//  2. handle, outside any transaction: the Downstream port applies the effect through its inbox
//     (model/outbox/inbox.h), so a second handling of one message applies nothing.
//  3. finish, only while still processing under that attempt: handled; failed (rejected, or its
//     type's attempts are spent); or pending again after the type's backoff.
//
// Pipelined, as a parallel consumer is: up to `concurrency_per_pod` records are handled at once, and the
// consumer polls again whenever fewer than that are held, so one slow record (a lost answer, a
// dying handler: a whole handle_timeout) holds up only its own slot, not a poll's batch. Under
// Ordering::per_key a partition's records are handled one at a time, in offset order (a key's
// records are in one partition, in the order published). Before each poll it commits, for each
// partition, the offset after the longest run of records done from its last commit — never past a
// record not done. A consumer that holds `concurrency_per_pod` records stops polling, and if that lasts
// longer than the group's max poll interval it is evicted, as a Kafka consumer is.
//
// The consumer holds nothing durable: its offsets are the group's, so a crash or an eviction hands
// its partitions to others, who read again from the last commit — the records redelivered then
// are re-locked and let go, or handled once more with no second effect. When the group's
// assignment changes, records held and not begun are dropped (they come again to whoever owns
// their partition), and those in flight finish but count for no commit.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "model/core/concurrency_limit.h"
#include "model/core/folded_loop.h"
#include "model/core/slot_pool.h"

#include "model/outbox/config.h"
#include "model/outbox/relay.h"

namespace relaysim::outbox {

class Consumer {
 public:
  Consumer(PodId pod, const RelayConfig& config, const NodePorts& ports);
  ~Consumer();
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  void start();
  // Stops for good (a draining pod): polls no more, lets go of the records held and not begun
  // (they come again to whoever owns their partition), and once those in flight are done commits
  // their offsets and leaves the group, so its partitions move to others at once.
  void stop();
  // Records queued or in flight (after stop(): in flight).
  std::uint32_t held() const { return held_; }

  // How long an idle poll waits for records.
  static constexpr Duration kPollWait = std::chrono::seconds(1);
  // How often a consumer asks again for a message still pending under the previous attempt.
  static constexpr Duration kRelockEvery = std::chrono::milliseconds(20);

 private:
  struct Work {
    Delivery d;
    std::uint64_t generation = 0;  // of the assignment it was delivered under
    std::uint64_t index = 0;       // its place in its partition's Track
    Time relock_since{};
    Time handle_started{};
    Handled outcome = Handled::failed;
    TimerId timer;
  };
  // A partition's records of the current assignment not yet committed, in offset order.
  struct Track {
    std::deque<std::uint64_t> offsets;
    std::deque<bool> done;
    std::uint64_t first = 0;      // index of offsets.front()
    std::uint64_t next = 0;       // index the next record gets
    std::uint64_t commit_to = 0;  // the offset to commit (0: nothing new)
    std::deque<std::uint32_t> lane;  // per_key: records held, not begun
    bool busy = false;               // per_key: one of its records is in flight
  };

  void maybe_poll();
  void polled(const Poll& p);
  void reassigned(std::uint64_t generation);
  void pump();
  void begin(std::uint32_t w);
  void relock(std::uint32_t w);
  void handled(std::uint32_t w, Handled outcome);
  void finish(std::uint32_t w);
  void done(std::uint32_t w);
  void commit_offsets();
  // Lets go of the records held and not begun.
  void drop_waiting();
  // After stop(), once nothing is in flight: commits and leaves the group.
  void leave_if_idle();
  // Tries `w`'s step again after the store failed.
  void retry_later(std::uint32_t w, void (Consumer::*step)(std::uint32_t), const StoreError& e, ShardId shard);

  PodId pod_;
  const RelayConfig& config_;
  NodePorts ports_;
  MemberId member_ = 0;
  std::uint64_t generation_ = 0;
  bool polling_ = false;
  bool stopping_ = false;
  SlotPool<Work> work_;                  // records held: queued or in flight
  std::vector<Track> tracks_;            // by partition
  std::deque<std::uint32_t> ready_;      // Ordering::none: records held, not begun
  std::vector<std::uint32_t> waiting_;   // per_key: partitions with a record to begin and none in flight
  std::vector<std::uint32_t> touched_;   // partitions with an offset to commit
  std::uint32_t held_ = 0;               // records queued or in flight
  ConcurrencyLimit in_flight_;  // concurrency_per_pod: records being handled
  FoldedLoop loop_;
  Time store_retry_at_{};
};

}  // namespace relaysim::outbox
