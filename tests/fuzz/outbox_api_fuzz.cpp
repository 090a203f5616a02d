// libFuzzer target: the outbox relay's business API (live/outbox/api.h) behind the live request
// parser (live/http_server.h), and the record body its world reads (read_record_body). The input
// is the raw bytes of one HTTP request as a client would send them; it is read as a connection
// reads it and answered by the API over a node on an in-memory store whose coordinator, log and
// downstream never answer (the node is never started: only its business operation runs).
// Whatever the bytes, the answer is a status the API promises (never a 500), every 4xx says why in
// JSON, and nothing crashes. The request's body is also read as a downstream's record: one that
// reads is written back by record_body to the same record.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "live/http_server.h"
#include "tests/fuzz/api_answer.h"
#include "live/outbox/api.h"
#include "model/outbox/memory_store.h"
#include "tests/live/sms_fakes.h"

namespace {

using namespace relaysim;

class FixedClock final : public Clock {
 public:
  Time now() const override { return time_from_ns(1'795'659'718'000'000'000); }
};

class SilentCoordinator final : public Coordinator {
 public:
  void acquire(std::string_view, std::uint64_t, Duration, GrantCallback) override {}
  void release(std::string_view, std::uint64_t) override {}
};

class SilentLog final : public outbox::Log {
 public:
  std::uint32_t partitions() const override { return 12; }
  outbox::ProducerId open_producer() override { return 1; }
  void produce(outbox::ProducerId, std::uint32_t, std::span<const outbox::Record>, std::uint64_t, Duration,
               ProduceCallback) override {}
  outbox::MemberId join() override { return 1; }
  void leave(outbox::MemberId) override {}
  void poll(outbox::MemberId, std::uint32_t, Duration, PollCallback) override {}
  void commit(outbox::MemberId, std::uint64_t, std::uint32_t, std::uint64_t) override {}
};

class SilentDownstream final : public outbox::Downstream {
 public:
  void handle(const outbox::Record&, Duration, HandleCallback) override {}
};

outbox::RelayConfig fuzz_config() {
  outbox::RelayConfig c;
  c.pods = 1;
  c.shards = 2;
  c.types = {outbox::TypePolicy{}, outbox::TypePolicy{}};
  c.types[0].name = "order_created";
  c.types[1].name = "order_paid";
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static FixedClock clock;
  static live::sms::testing::StillTimers timers;
  static Rng rng(7);
  static SilentCoordinator coordinator;
  static SilentLog log;
  static SilentDownstream downstream;
  static outbox::MemoryStore shard0, shard1;
  static outbox::Store* const shards[] = {&shard0, &shard1};
  static outbox::Events events;
  static const outbox::RelayConfig config = fuzz_config();
  static outbox::Node node(1, config, outbox::NodePorts{clock, timers, rng, coordinator, log, downstream, shards, events});
  static live::outbox::Api api(node, config, 1);
  live::ServerLimits limits;
  limits.max_body = 16 * 1024;
  limits.max_header = 4096;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const live::Response r = live::answer_bytes(bytes, limits, [](const live::Incoming& in) {
    std::optional<live::Response> got;
    api.handle(in, [&got](live::Response&& answer) {
      if (got) std::abort();  // answered twice
      got = std::move(answer);
    });
    if (!got) std::abort();  // never answered
    std::string problem;
    if (const std::optional<outbox::Record> record = live::outbox::read_record_body(in.body, config, problem)) {
      std::string again;
      const std::optional<outbox::Record> back =
          live::outbox::read_record_body(live::outbox::record_body(*record, config), config, again);
      if (!back || !(*back == *record)) std::abort();  // written back, not the same record
    } else if (problem.empty()) {
      std::abort();  // refused without a reason
    }
    return std::move(*got);
  });
  fuzzing::check_answer(r);
  return 0;
}
