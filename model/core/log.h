// PartitionedLog: the port to a partitioned, append-only log — Kafka, as the outbox relay
// publishes to it. No system uses it yet: the outbox relay brings the simulated one (sim/world/)
// and the live one (librdkafka).
//
// Promises: records of one partition are delivered in the order they were appended, each with its
// offset; an append can fail or time out, and a timed-out append may still have been written (the
// relay must tolerate the duplicate); consumers commit offsets and resume after the last commit.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/core/function.h"
#include "model/core/time.h"

namespace relaysim {

enum class LogStatus : std::uint8_t { ok, unavailable, timeout };

struct Appended {
  LogStatus status = LogStatus::unavailable;
  std::uint64_t offset = 0;  // valid when ok
};

class PartitionedLog {
 public:
  virtual ~PartitionedLog() = default;
  using AppendCallback = InplaceFunction<void(const Appended&), 48>;
  virtual std::uint32_t partitions() const = 0;
  // Appends `value` under `key` to `partition`.
  virtual void append(std::uint32_t partition, std::string_view key, std::string_view value, Duration timeout,
                      AppendCallback done) = 0;
};

}  // namespace relaysim
