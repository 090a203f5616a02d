// RedisLog, the outbox relay's partitioned log on a real Redis (live/outbox/redis_log.h). Its twin
// check: one trace of produces (repeats after a lost acknowledgement, a new session, a repeat that
// is not the same record), joins, polls, commits (one of an old generation) and a leave, run
// through the simulated log (sim/outbox/log.h) and through Redis, gives the same writes and
// repeats and the same answer to every poll. Then what only a real server shows: a member that
// stops polling is evicted and told so; a Redis that is gone refuses produces and answers polls
// empty at the end of their wait; records and commits outlive a restart of a Redis that keeps an
// append-only file synced at every write (as a log must be run).
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "live/clock.h"
#include "live/outbox/redis_log.h"
#include "sim/kernel/kernel.h"
#include "sim/outbox/log.h"
#include "sim/world/process.h"
#include "tests/live/redis_server.h"
#include "tests/live/run_loop.h"

namespace relaysim::live::outbox {
namespace {

using namespace std::chrono_literals;
using relaysim::outbox::Delivery;
using relaysim::outbox::Log;
using relaysim::outbox::MemberId;
using relaysim::outbox::Poll;
using relaysim::outbox::Produced;
using relaysim::outbox::ProducerId;
using relaysim::outbox::Record;
using testing_redis::RedisServer;

Record record(std::uint64_t id, std::uint64_t key = 7) {
  Record r;
  r.shard = 1;
  r.id = id;
  r.attempt = 1;
  r.type = 3;
  r.key = key;
  r.version = id;
  r.fence = 2;
  r.created_at = time_from_ns(1'795'000'000'000'000'000 + static_cast<std::int64_t>(id));
  return r;
}

// The log's writes and repeats as text, producers numbered in the order they first wrote.
class Truth final : public SinkFor<sim::outbox::LogAppended>, public SinkFor<sim::outbox::LogDeduped> {
 public:
  void on(const sim::outbox::LogAppended& e) override {
    lines.push_back("append p" + std::to_string(e.partition) + " @" + std::to_string(e.offset) + " " + record_text(e.record) +
                    " by " + producer(e.producer) + " seq " + std::to_string(e.sequence));
  }
  void on(const sim::outbox::LogDeduped& e) override {
    lines.push_back(std::string(e.same ? "repeat" : "not-the-same") + " p" + std::to_string(e.partition) + " " +
                    record_text(e.record) + " by " + producer(e.producer) + " seq " + std::to_string(e.sequence));
  }
  std::vector<std::string> lines;

 private:
  std::string producer(ProducerId id) {
    return "P" + std::to_string(producers.try_emplace(id, producers.size() + 1).first->second);
  }
  std::map<ProducerId, std::size_t> producers;
};

std::string text(const Poll& p) {
  std::string out = "generation " + std::to_string(p.generation) + (p.evicted ? " evicted" : "");
  for (const Delivery& d : p.deliveries) out += " | p" + std::to_string(d.partition) + " @" + std::to_string(d.offset) + " " + record_text(d.record);
  return out;
}

// One trace, on any log: `step(f)` runs f and waits until the log has done what it asked.
template <class Step>
std::vector<std::string> run_trace(Log& log, Step step) {
  std::vector<std::string> answers;
  const auto produce = [&](ProducerId producer, std::uint32_t partition, std::vector<Record> records, std::uint64_t first) {
    step([&, producer, partition, records, first](auto done) {
      log.produce(producer, partition, records, first, 1s, [&answers, done](Produced p) mutable {
        answers.push_back("produce " + std::string(to_string(p)));
        done();
      });
    });
  };
  const auto poll = [&](MemberId member, std::uint32_t max = 10) {
    step([&, member, max](auto done) {
      log.poll(member, max, 200ms, [&answers, done](const Poll& p) mutable {
        answers.push_back("poll " + text(p));
        done();
      });
    });
  };
  const auto at_once = [&](auto f) {
    step([f](auto done) mutable {
      f();
      done();
    });
  };
  const ProducerId p1 = log.open_producer();
  produce(p1, 0, {record(1), record(2), record(3)}, 0);
  produce(p1, 0, {record(2), record(3), record(4)}, 1);  // its acknowledgement was lost: sent again
  const ProducerId p2 = log.open_producer();
  produce(p2, 0, {record(1)}, 0);  // a new session does not dedup against the old one
  produce(p1, 1, {record(5, 8)}, 0);
  produce(p1, 0, {record(9)}, 0);  // sequence 0 again, another record
  const MemberId a = log.join();
  poll(a);
  const MemberId b = log.join();
  poll(b);  // a rebalance: b takes partition 1 from its committed offset
  poll(a);  // partition 0 again from its committed offset (nothing committed yet)
  at_once([&] { log.commit(a, 1, 0, 3); });  // of an old generation: not applied
  at_once([&] { log.commit(a, 2, 0, 3); });
  at_once([&] { log.leave(b); });
  produce(p1, 1, {record(10), record(11), record(12)}, 1);
  poll(a, 2);  // both partitions, 0 from offset 3, 1 from 0: a poll is shared, one record each
  poll(a);     // the rest: 0 from offset 4, 1 from 1
  poll(b);  // it left
  return answers;
}

class RedisLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);  // as relaysim's main does
    std::string problem;
    ASSERT_TRUE(redis.start(problem)) << problem;
  }
  RedisLog make(RedisLogOptions options = {}) {
    options.partitions = 2;
    return RedisLog(io, clock, RedisAddress{redis.socket()}, options, 1, &events);
  }
  void until(const bool& done) { ASSERT_TRUE(testing_loop::run_until(io, done)) << "no answer"; }
  void wait(Duration d) { testing_loop::run_for(io, d); }

  boost::asio::io_context io;
  LiveClock clock;
  RedisServer redis;
  sim::outbox::WorldEvents events;
};

TEST_F(RedisLogTest, MakesTheSimulatorsLogCallForCall) {
  // The simulated log, answering in a millisecond, one step every 100 ms.
  Truth simulated_truth;
  std::vector<std::string> simulated;
  {
    sim::Kernel kernel;
    sim::outbox::WorldEvents world;
    world.attach(simulated_truth);
    sim::outbox::LogSpec spec;
    spec.partitions = 2;
    spec.latency.shape = sim::LatencyShape::constant;
    spec.latency.mean = 1ms;
    sim::outbox::SimLog service(spec, kernel, 1, world);
    sim::Process process(kernel, 0);
    // The port on the simulated log, for this one process.
    struct Port final : Log {
      sim::outbox::SimLog& s;
      sim::Process& p;
      Port(sim::outbox::SimLog& service, sim::Process& process) : s(service), p(process) {}
      std::uint32_t partitions() const override { return s.partitions(); }
      ProducerId open_producer() override { return s.open_producer(); }
      void produce(ProducerId producer, std::uint32_t partition, std::span<const Record> records, std::uint64_t first,
                   Duration timeout, ProduceCallback done) override {
        s.produce(p, producer, partition, records, first, timeout, std::move(done));
      }
      MemberId join() override { return s.join(1); }
      void leave(MemberId m) override { s.leave(m); }
      void poll(MemberId m, std::uint32_t max, Duration wait, PollCallback done) override {
        s.poll(p, m, max, wait, std::move(done));
      }
      void commit(MemberId m, std::uint64_t g, std::uint32_t partition, std::uint64_t offset) override {
        s.commit(m, g, partition, offset);
      }
    } port(service, process);
    simulated = run_trace(port, [&](auto f) {
      bool done = false;
      f([&done] { done = true; });
      kernel.run_until(kernel.now() + 100ms);
      ASSERT_TRUE(done);
    });
  }
  // Redis, on the same trace.
  Truth real_truth;
  events.attach(real_truth);
  RedisLog log = make();
  const std::vector<std::string> real = run_trace(log, [&](auto f) {
    bool done = false;
    f([&done] { done = true; });
    until(done);
  });
  EXPECT_EQ(real_truth.lines, simulated_truth.lines);
  EXPECT_EQ(real, simulated);
  EXPECT_EQ(log.failures(), 0u);
  // What the trace is: the writes, the repeats and a refusal of sequence 0's other record.
  ASSERT_EQ(simulated_truth.lines.size(), 12u);
  EXPECT_EQ(simulated_truth.lines[8].substr(0, 12), "not-the-same");
  EXPECT_EQ(simulated.back(), "poll generation 3 evicted");
  // The poll of 2 took a record of each partition, not both from partition 0.
  const std::string& shared = simulated[simulated.size() - 3];
  for (const char* d : {"p0 @3", "p1 @0"}) EXPECT_NE(shared.find(d), std::string::npos) << shared;
  EXPECT_EQ(shared.find("p0 @4"), std::string::npos) << shared;
}

TEST_F(RedisLogTest, AMemberThatStopsPollingIsEvictedAndToldSo) {
  RedisLogOptions options;
  options.max_poll_interval = 1s;
  RedisLog log = make(options);
  bool produced = false;
  const std::vector<Record> one = {record(1)};
  log.produce(log.open_producer(), 0, one, 0, 1s, [&](Produced p) {
    EXPECT_EQ(p, Produced::ok);
    produced = true;
  });
  until(produced);
  const MemberId slow = log.join();
  const MemberId steady = log.join();
  std::optional<Poll> answer;
  std::vector<Delivery> got;
  const auto poll = [&](MemberId m) {
    answer.reset();
    bool done = false;
    log.poll(m, 10, 100ms, [&](const Poll& p) {
      answer = Poll{p.generation, p.evicted, {}};
      got.assign(p.deliveries.begin(), p.deliveries.end());
      done = true;
    });
    until(done);
  };
  poll(slow);
  poll(steady);
  EXPECT_EQ(answer->generation, 2u);
  // `steady` polls on; `slow` does not, past its interval.
  for (int i = 0; i < 8; ++i) {
    wait(200ms);
    poll(steady);
  }
  EXPECT_FALSE(answer->evicted);
  EXPECT_EQ(answer->generation, 3u) << "the eviction was a rebalance";
  poll(slow);
  EXPECT_TRUE(answer->evicted);
}

// A poll answer lost on its way (Redis stalled past the call's timeout, ran the poll once it
// woke, and the client had given up the connection): the member asks again from its own
// position and gets the records, rather than finding them passed over.
TEST_F(RedisLogTest, APollAnswerLostOnItsWayIsReadAgainNotSkipped) {
  RedisLogOptions options;
  options.call_timeout = 200ms;
  RedisLog log = make(options);
  const ProducerId producer = log.open_producer();
  const auto produce = [&](std::uint64_t first, std::vector<Record> records) {
    bool done = false;
    log.produce(producer, 0, records, first, 1s, [&](Produced p) {
      EXPECT_EQ(p, Produced::ok);
      done = true;
    });
    until(done);
  };
  produce(0, {record(1), record(2), record(3)});
  const MemberId m = log.join();
  std::vector<std::uint64_t> offsets;
  bool polled = false;
  const auto poll = [&](Duration wait) {
    polled = false;
    offsets.clear();
    log.poll(m, 10, wait, [&](const Poll& p) {
      for (const Delivery& d : p.deliveries) offsets.push_back(d.offset);
      polled = true;
    });
  };
  poll(300ms);
  until(polled);
  EXPECT_EQ(offsets, (std::vector<std::uint64_t>{0, 1, 2}));
  produce(3, {record(4), record(5)});
  redis.pause();
  poll(3s);  // its first ask times out while Redis is stopped
  wait(500ms);
  redis.resume();
  until(polled);
  EXPECT_EQ(offsets, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_GT(log.failures(), 0u) << "an ask was lost";
}

TEST_F(RedisLogTest, ARedisThatIsGoneRefusesProducesAndAnswersPollsEmptyAtTheirWait) {
  RedisLog log = make();
  const MemberId m = log.join();
  redis.kill();
  std::optional<Produced> produced;
  bool answered = false;
  const std::vector<Record> one = {record(1)};
  log.produce(log.open_producer(), 0, one, 0, 1s, [&](Produced p) {
    produced = p;
    answered = true;
  });
  until(answered);
  EXPECT_EQ(produced, Produced::unavailable);
  bool polled = false;
  log.poll(m, 10, 300ms, [&](const Poll& p) {
    EXPECT_FALSE(p.evicted);
    EXPECT_TRUE(p.deliveries.empty());
    polled = true;
  });
  until(polled);
  EXPECT_GT(log.failures(), 0u);
}

TEST(RedisLogDurable, WrittenRecordsAndCommitsOutliveARestart) {
  std::signal(SIGPIPE, SIG_IGN);
  RedisServer redis(true);
  std::string problem;
  ASSERT_TRUE(redis.start(problem)) << problem;
  boost::asio::io_context io;
  LiveClock clock;
  RedisLogOptions options;
  options.partitions = 1;
  RedisLog log(io, clock, RedisAddress{redis.socket()}, options, 1);
  const auto run_until = [&](const bool& done) { ASSERT_TRUE(testing_loop::run_until(io, done)) << "no answer"; };
  bool produced = false;
  const std::vector<Record> three = {record(1), record(2), record(3)};
  log.produce(log.open_producer(), 0, three, 0, 1s, [&](Produced p) {
    EXPECT_EQ(p, Produced::ok);
    produced = true;
  });
  run_until(produced);
  const MemberId first = log.join();
  std::vector<std::uint64_t> offsets;
  std::uint64_t generation = 0;
  bool evicted = false;
  const auto poll = [&](MemberId m) {
    bool done = false;
    offsets.clear();
    log.poll(m, 10, 300ms, [&](const Poll& p) {
      generation = p.generation;
      evicted = p.evicted;
      for (const Delivery& d : p.deliveries) offsets.push_back(d.offset);
      done = true;
    });
    run_until(done);
  };
  poll(first);
  EXPECT_EQ(offsets, (std::vector<std::uint64_t>{0, 1, 2}));
  log.commit(first, generation, 0, 2);
  log.leave(first);
  const MemberId second = log.join();
  poll(second);  // after the commit and the leave: the same connection keeps their order
  EXPECT_EQ(offsets, (std::vector<std::uint64_t>{2}));
  log.leave(second);
  poll(second);  // told it is gone: the leave has reached Redis
  EXPECT_TRUE(evicted);
  // Killed and started again: an acknowledged write or commit was on disk before it was answered.
  redis.kill();
  ASSERT_TRUE(redis.start(problem)) << problem;
  poll(log.join());
  EXPECT_EQ(offsets, (std::vector<std::uint64_t>{2})) << "the records and the committed offset outlived the restart";
}

}  // namespace
}  // namespace relaysim::live::outbox
