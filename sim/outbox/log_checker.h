// LogChecker: the parts of O-log that the log and its consumer group answer for, with no
// message's record to read: every record the log acknowledged was written (no producer session
// acknowledged a record it deduplicated against another one), and the group never commits past a
// record no consumer finished.
//
// The rest of O-log (every duplicate record explained; a message marked published only after the
// log acknowledged its record) reads each message's record, and is the MessageChecker's. The
// state here (per partition, the offsets consumers finished and how far commits were checked) is
// its own, and no event it takes reaches another checker.
#pragma once

#include <cstdint>
#include <vector>

#include "model/core/events.h"
#include "model/outbox/events.h"
#include "sim/oracle/ledger.h"
#include "sim/outbox/spec.h"
#include "sim/outbox/truth.h"
#include "sim/outbox/violations.h"

namespace relaysim::sim::outbox {

class LogChecker final : public SinkFor<relaysim::outbox::Consumed>,
                         public SinkFor<LogDeduped>,
                         public SinkFor<GroupCommitted> {
 public:
  LogChecker(const OutboxSpec& spec, Ledger& ledger);

  void on(const relaysim::outbox::Consumed& e) override;
  void on(const LogDeduped& e) override;
  void on(const GroupCommitted& e) override;

 private:
  Violations violate_;
  // Per partition: which offsets a consumer finished, and up to where commits were checked.
  std::vector<std::vector<bool>> consumed_;
  std::vector<std::uint64_t> checked_;
};

}  // namespace relaysim::sim::outbox
