// SimLog: the simulated partitioned log (Kafka) behind the outbox relay's Log port
// (model/outbox/ports.h) — partitions of records at offsets, idempotent producer sessions, one
// consumer group with rebalances, committed offsets, and the faults of a real broker.
//
// Producing: a produce travels half its latency to the broker, in order behind the same
// session's earlier produces to that partition (one connection), and is written there; its
// acknowledgement travels the other half back. Each (session, partition) remembers the last
// sequence it wrote and the last five it wrote with their offsets: a record whose sequence is
// not past the last is taken for a repeat and acknowledged without being written (Kafka's
// idempotent producer — within one session only). An `error` outage refuses produces (certainly
// not written), a `timeout` outage swallows them; `lost_acks` loses the acknowledgement of a
// written one (the producer times out: ambiguous).
//
// Consuming: partitions are spread over the group's live members (partition p to the p-th
// member mod n, by member id); a member's poll takes records from its partitions' positions and
// is answered half a latency later, or is parked until records arrive or its wait ends. A member
// that does not poll again within max_poll_interval is evicted; one whose process died is evicted
// after session_timeout. Every membership change is a rebalance, an eager one (Kafka's classic
// protocol): every partition resumes from its committed offset, whether it changed hands or not,
// so records given out and not committed are given out again — and a consumer may drop whatever
// it held when its generation changes.
// A commit applies only from the partition's owner in the current generation. Records below a
// partition's committed offset are dropped (nobody can read them again).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/core/ring.h"
#include "model/core/slot_pool.h"
#include "model/outbox/ports.h"
#include "sim/kernel/kernel.h"
#include "sim/outbox/truth.h"
#include "sim/scenario/schema.h"
#include "sim/world/distribution.h"
#include "sim/world/process.h"

namespace relaysim::sim::outbox {

struct LogSpec {
  std::uint32_t partitions = 12;
  LatencySpec latency{std::chrono::milliseconds(1), std::chrono::milliseconds(5)};
  double lost_acks = 0.0;
  std::vector<Outage> outages;
  Duration max_poll_interval = std::chrono::minutes(5);
  Duration session_timeout = std::chrono::seconds(10);
  bool operator==(const LogSpec&) const = default;

  // Below a second, a consumer is evicted for the time any handling takes, and the group does
  // nothing but rebalance (Kafka's own floor for sessions is seconds).
  static constexpr Bounds<Duration> kMaxPollInterval{std::chrono::seconds(1), kLongestDuration, false,
                                                     "a shorter one evicts consumers for handling at all"};
  static constexpr Bounds<Duration> kSessionTimeout = kPeriod;
  static constexpr Bounds<std::uint32_t> kPartitions{1, 4096};
};
const Schema<LogSpec>& log_schema();

class SimLog {
 public:
  SimLog(const LogSpec& spec, Kernel& kernel, std::uint64_t seed, WorldEvents& events);
  SimLog(const SimLog&) = delete;
  SimLog& operator=(const SimLog&) = delete;

  std::uint32_t partitions() const { return static_cast<std::uint32_t>(partitions_.size()); }
  ProducerId open_producer() { return ++last_producer_; }
  void produce(Process& caller, ProducerId producer, std::uint32_t partition, std::span<const Record> records,
               std::uint64_t first_sequence, Duration timeout, relaysim::outbox::Log::ProduceCallback done);

  MemberId join(std::uint32_t pod);
  void leave(MemberId member);
  // The member's process died: its session runs out after session_timeout.
  void lost(MemberId member);
  void poll(Process& caller, MemberId member, std::uint32_t max_records, Duration wait,
            relaysim::outbox::Log::PollCallback done);
  void commit(MemberId member, std::uint64_t generation, std::uint32_t partition, std::uint64_t offset);

  std::uint64_t records_written() const { return written_; }
  std::uint64_t generation() const { return generation_; }
  // Records of a partition not yet committed by the group (its lag).
  std::uint64_t lag(std::uint32_t partition) const;

 private:
  struct Partition {
    Ring<Record> records;        // offsets base .. base + size
    std::uint64_t base = 0;
    std::uint64_t committed = 0;
    std::uint64_t delivered_to = 0;  // every offset below was given out at least once
    MemberId owner = 0;
    std::uint64_t position = 0;  // the owner's next offset
    std::uint64_t end() const { return base + records.size(); }
  };
  struct Session {  // one producer session on one partition
    std::uint64_t last = 0;
    bool any = false;
    Time last_arrival{};
    // Its last five writes (as a Kafka broker keeps its last five batches per producer): where
    // each one's sequences landed, to tell a repeat of one of them by its content.
    struct Batch {
      std::uint64_t first_seq = 0;
      std::uint64_t first_offset = 0;
      std::uint64_t count = 0;
    };
    Batch recent[5] = {};
    std::uint32_t recent_next = 0;
  };
  struct Produce {
    std::vector<Record> records;
    ProducerId producer = 0;
    std::uint32_t partition = 0;
    std::uint64_t first_sequence = 0;
  };
  struct Member {
    MemberId id = 0;
    std::uint32_t pod = 0;
    bool alive = false;
    bool dead = false;  // its process died: only its session timeout evicts it
    std::uint64_t polls = 0;  // bumped at each poll: an eviction check compares it
    Time last_poll{};
    // Its one pending max_poll_interval check: moved on lazily (when it fires and finds a later
    // poll) rather than one check per poll, which at a hundred polls a second kept tens of
    // thousands of no-op events in the queue.
    bool checking = false;
    std::vector<std::uint32_t> partitions;
    // A parked poll.
    bool parked = false;
    Process* caller = nullptr;
    std::uint64_t asked_by = 0;  // the caller's incarnation when it parked
    std::uint32_t max = 0;
    relaysim::outbox::Log::PollCallback done;
    EventId wait;
  };

  bool refuses(Time t) const;
  bool swallows(Time t) const;
  void write(std::uint32_t slot);
  void rebalance();
  // Forgets a member's parked poll without answering it (its process is gone or leaving).
  void drop_parked(Member& m);
  void check_polls(MemberId member, Time at);
  void evict(MemberId member, bool slow);
  // Gives the member's parked or new poll what its partitions hold; false when they hold nothing.
  bool fill(Member& m, std::uint32_t max, std::vector<relaysim::outbox::Delivery>& out);
  void answer(Member& m, Process& caller, std::uint64_t asked_by, relaysim::outbox::Log::PollCallback done, bool evicted,
              std::uint32_t slot);

  LogSpec spec_;
  Kernel& kernel_;
  Latency latency_;
  Rng rng_;
  WorldEvents& events_;
  std::vector<Partition> partitions_;
  std::unordered_map<std::uint64_t, Session> sessions_;  // producer << 16 | partition
  SlotPool<Produce> produces_;
  SlotPool<std::vector<relaysim::outbox::Delivery>> answers_;
  std::vector<Member> members_;  // by id - 1
  std::uint64_t generation_ = 0;
  ProducerId last_producer_ = 1'000'000;  // well above any pod number
  std::uint64_t written_ = 0;
};

}  // namespace relaysim::sim::outbox
