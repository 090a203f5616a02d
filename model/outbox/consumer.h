// Consumer: one pod's member of the log's consumer group — it polls records, handles each
// message, finishes it in its shard, and commits the poll's offsets once every record of it is
// done.
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
// Records are handled up to `concurrency` at once; under Ordering::per_key one at a time per
// partition, in offset order (a key's records are in one partition, in the order published).
//
// The consumer holds nothing durable: its offsets are the group's, committed after the records
// are done, so a crash or an eviction (a poll later than the group's max poll interval) hands its
// partitions to others, who read again from the last commit — the records redelivered then are
// re-locked and let go, or handled once more with no second effect.
#pragma once

#include <cstdint>
#include <vector>

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

  // How long an idle poll waits for records.
  static constexpr Duration kPollWait = std::chrono::seconds(1);
  // How often a consumer asks again for a message still pending under the previous attempt.
  static constexpr Duration kRelockEvery = std::chrono::milliseconds(20);

 private:
  struct Work {
    Delivery d;
    Time relock_since{};
    Time handle_started{};
    Handled outcome = Handled::failed;
    TimerId timer;
    bool done = false;
  };
  struct Lane {  // per_key: a partition's records of the current poll, in offset order
    std::vector<std::uint32_t> items;
    std::size_t next = 0;
    bool busy = false;
  };

  void poll();
  void polled(const Poll& p);
  void pump();
  void begin(std::uint32_t w);
  void relock(std::uint32_t w);
  void handled(std::uint32_t w, Handled outcome);
  void finish(std::uint32_t w);
  void done(std::uint32_t w);
  void end_poll();
  void commit_offsets();
  // Tries `w`'s step again after the store failed.
  void retry_later(std::uint32_t w, void (Consumer::*step)(std::uint32_t), const StoreError& e, ShardId shard);

  PodId pod_;
  const RelayConfig& config_;
  NodePorts ports_;
  MemberId member_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<Work> work_;         // the current poll's records
  std::vector<Lane> lanes_;        // per partition (per_key)
  std::vector<std::uint32_t> active_lanes_;
  std::size_t next_ = 0;           // Ordering::none: the next record to begin
  std::uint32_t in_flight_ = 0;
  std::uint32_t remaining_ = 0;    // records of the poll not done
  bool pumping_ = false;
  bool again_ = false;
  Time store_retry_at_{};
  std::vector<std::uint64_t> commit_to_;  // by partition: the offset to commit after this poll (0: none)
  std::vector<std::uint32_t> touched_;    // partitions with an offset to commit
};

}  // namespace relaysim::outbox
