// RedisLog: the outbox relay's partitioned log (the Log port, model/outbox/ports.h) on a real
// Redis — Kafka is not packaged in Debian; Redis is, and its streams hold the records.
//
// Kafka's semantics are kept as the simulated log keeps them (sim/outbox/log.h), by one Lua script
// (live/outbox/log.lua, compiled in) that runs each call atomically on the server:
//   - a partition is a stream whose entry ids are Kafka's dense offsets from 0, in order;
//   - an idempotent producer session writes each (partition, sequence) once: a produce repeated
//     after a lost acknowledgement is acknowledged and not written again, if it is one of the
//     session's five last writes (a broker's window); a new session does not dedup against an old;
//   - one consumer group: a member joins at its first poll; every change of membership is an
//     eager rebalance (a new generation, partition p to the p-th member by id); a member reads
//     from its own position, sent with each poll (so an answer lost on its way is read again),
//     and from the committed offset in a generation new to it; a member that does not poll
//     within max_poll_interval, or whose heartbeats stop for session_timeout (its process died),
//     is evicted, by Redis's clock (its wall clock: a step of it moves every deadline), at the
//     next group call of any member; a commit applies only from the partition's owner in the
//     current generation, and the records below it are trimmed.
// Redis must keep every key: run it with `maxmemory-policy noeviction` (the default), or an
// evicted producer session writes a repeat twice and an evicted stream loses records.
// Redis's own consumer groups (XREADGROUP, XAUTOCLAIM) track each entry's acknowledgement, not a
// partition's committed position, and hand a dead consumer's entries over one by one; Kafka's
// ownership of whole partitions, which the relay's per-key order rests on, is kept in the script
// instead. docs/live.md says what else differs from Kafka.
//
// Producer and member ids are made here (the port hands them out at once): a random prefix per
// log object and a counter, so two processes' ids do not meet and one process's members sort in
// the order they joined. A poll that finds nothing asks again every `poll_retry` until its wait
// ends (a parked poll, as the simulated log's); one that cannot reach Redis is answered empty at
// the end of its wait, under the last generation it saw. A produce that Redis refuses is
// `unavailable`; one unanswered within its timeout, or whose answer is not the script's, is
// `timeout` (it may have been written). Commits, leaves and heartbeats are not answered (the port
// does not ask): a lost one is as a lost packet to a broker. Records travel as text (the eight
// fields of outbox::Record, decimal); a stream entry that does not read as one is skipped.
//
// With `truth`, every write and every repeat the script reports is told there (LogAppended,
// LogDeduped: the simulator's own events of its log), and so is every commit it answered, taken
// or refused (GroupCommitted), at the time its answer came. A commit with no answer is told of
// by nothing (it may have been taken).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "live/redis_client.h"
#include "model/core/bounds.h"
#include "model/core/ports.h"
#include "model/outbox/ports.h"
#include "sim/outbox/truth.h"

namespace relaysim::live::outbox {

// A live consumer's session: its heartbeats come from its process's loop every third of it, so
// a session of a few milliseconds would evict a member for any pause of the loop.
inline constexpr Bounds<Duration> kLiveSessionTimeout{std::chrono::milliseconds(300), std::chrono::hours(1), false,
                                                      "a shorter one evicts a consumer whose loop is busy for a moment"};

struct RedisLogOptions {
  std::string topic = "outbox";
  std::uint32_t partitions = 12;
  Duration max_poll_interval = std::chrono::minutes(5);
  Duration session_timeout = std::chrono::seconds(10);
  Duration call_timeout = std::chrono::seconds(2);  // a poll's, a commit's, a heartbeat's, a leave's
  Duration poll_retry = std::chrono::milliseconds(20);
};

// A record as the script stores it, and back; nullopt for text that is not one.
std::string record_text(const relaysim::outbox::Record& r);
std::optional<relaysim::outbox::Record> record_of(std::string_view text);

class RedisLog final : public relaysim::outbox::Log {
 public:
  RedisLog(boost::asio::io_context& io, const Clock& clock, RedisAddress address, RedisLogOptions options,
           std::uint32_t pod, sim::outbox::WorldEvents* truth = nullptr);
  ~RedisLog() override;
  RedisLog(const RedisLog&) = delete;
  RedisLog& operator=(const RedisLog&) = delete;

  std::uint32_t partitions() const override { return options_.partitions; }
  relaysim::outbox::ProducerId open_producer() override { return next_id(); }
  void produce(relaysim::outbox::ProducerId producer, std::uint32_t partition,
               std::span<const relaysim::outbox::Record> records, std::uint64_t first_sequence, Duration timeout,
               ProduceCallback done) override;
  relaysim::outbox::MemberId join() override;
  void leave(relaysim::outbox::MemberId member) override;
  void poll(relaysim::outbox::MemberId member, std::uint32_t max_records, Duration wait, PollCallback done) override;
  void commit(relaysim::outbox::MemberId member, std::uint64_t generation, std::uint32_t partition,
              std::uint64_t offset) override;

  // Script calls that failed (refused, unanswered, or answered with what the script never says).
  std::uint64_t failures() const { return failures_; }
  // Calls to Redis not answered yet (a draining process waits for its leave and commits).
  std::size_t calls_in_flight() const { return scripts_.calls_in_flight(); }

 private:
  struct Member {
    std::unique_ptr<boost::asio::steady_timer> retry;      // a poll's next ask, while it waits
    std::unique_ptr<boost::asio::steady_timer> heartbeat;  // after its first poll
    PollCallback done;                                     // the poll under way, if any
    std::uint32_t max = 0;
    std::chrono::steady_clock::time_point deadline;
    std::uint64_t generation = 0;  // the last it was told
    // Where its answers of that generation left each partition it read: its own position, as a
    // Kafka consumer keeps it, so that an answer lost on its way is read again, not skipped.
    std::map<std::uint32_t, std::uint64_t> next;
    bool beating = false;
  };
  // A produce under way.
  struct Produce {
    std::vector<relaysim::outbox::Record> records;
    relaysim::outbox::ProducerId producer = 0;
    std::uint32_t partition = 0;
    std::uint64_t first_sequence = 0;
    ProduceCallback done;
  };
  void produced(Produce& call, KvStatus status, const redisReply* reply);
  std::uint64_t next_id();
  std::vector<std::string> group_args(std::string_view op, relaysim::outbox::MemberId member) const;
  void ask(relaysim::outbox::MemberId member);
  void polled(relaysim::outbox::MemberId member, KvStatus status, const redisReply* reply);
  void answer(relaysim::outbox::MemberId member, bool evicted);
  void beat(relaysim::outbox::MemberId member);

  boost::asio::io_context& io_;
  const Clock& clock_;
  RedisScripts scripts_;
  RedisLogOptions options_;
  std::uint32_t pod_;
  sim::outbox::WorldEvents* truth_;
  std::string key_;  // {topic}
  std::uint64_t id_prefix_ = 0;
  std::uint64_t id_counter_ = 0;
  std::unordered_map<relaysim::outbox::MemberId, Member> members_;
  std::vector<relaysim::outbox::Delivery> deliveries_;  // a poll's answer, while its callback runs
  std::uint64_t failures_ = 0;
  std::shared_ptr<bool> alive_;  // cleared when this is destroyed: a late answer is dropped
};

}  // namespace relaysim::live::outbox
