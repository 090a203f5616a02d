// Oracle: judges an outbox run against its invariants (sim/outbox/invariants.h) from the model's
// events, the world's ground truth and the coordinator's grants, reporting every violation to the
// ledger; and attributes every duplicate record in the log to its cause.
//
// The judging is done by one checker per concern, each a sink with its own state:
//
//   MessageChecker     O-final, O-once, O-retry, O-order, O-rollback, O-relock, O-lifecycle, and
//                      O-log's duplicate records and marks: per-message state, built only from
//                      transitions the stores reported as applied (sim/outbox/message_checker.h)
//   LeadershipChecker  O-fence: per-shard fencing tokens, per-token lease grants
//                      (sim/outbox/leadership_checker.h)
//   LogChecker         O-log's acknowledged-means-written and group commits: per-partition
//                      offsets (sim/outbox/log_checker.h)
//
// The Oracle owns them, attaches them to the buses and forwards the end-of-run checks and the
// counters. It attaches them so that the reports of one event come in one fixed order (see attach).
#pragma once

#include <cstdint>
#include <span>

#include "model/outbox/events.h"
#include "model/outbox/store.h"
#include "sim/oracle/ledger.h"
#include "sim/outbox/leadership_checker.h"
#include "sim/outbox/log_checker.h"
#include "sim/outbox/message_checker.h"
#include "sim/outbox/spec.h"
#include "sim/outbox/truth.h"
#include "sim/world/coordinator.h"

namespace relaysim::sim::outbox {

class Oracle {
 public:
  Oracle(const Scenario& scenario, Ledger& ledger, Judged judged = Judged::simulation)
      : leadership_(spec_of(scenario), ledger), messages_(scenario, ledger, judged), log_(spec_of(scenario), ledger) {}

  // Attaches the checkers to the run's buses, where the oracle's place among their sinks is.
  void attach(relaysim::outbox::Events& model, WorldEvents& world);
  // Attaches the checker of leases to the coordinator's bus.
  void attach(CoordinatorBus& coordinator) { coordinator.attach(leadership_); }

  // Live: a change of a message a killed process committed and never logged (MessageChecker).
  void recovered(relaysim::outbox::MessageRef m, const relaysim::outbox::Message& now, Time at) {
    messages_.recovered(m, now, at);
  }
  // Live: a message as its shard holds it at the end, against what the logs made it (MessageChecker).
  void held(relaysim::outbox::MessageRef m, const relaysim::outbox::Message& row, Time end) { messages_.held(m, row, end); }

  // The end-of-run checks: nothing stuck, nothing lost, every handled message's effect applied.
  void finish(Time end, std::span<relaysim::outbox::Store* const> shards) { messages_.finish(end, shards); }

  std::uint64_t duplicates(DuplicateCause c) const { return messages_.duplicates(c); }
  std::uint64_t effects() const { return messages_.effects(); }
  std::uint64_t lost() const { return messages_.lost(); }
  std::uint64_t stuck() const { return messages_.stuck(); }
  std::uint64_t committed() const { return messages_.committed(); }
  std::uint64_t stale_writes_kept_out() const { return leadership_.stale_writes_kept_out(); }

 private:
  LeadershipChecker leadership_;
  MessageChecker messages_;
  LogChecker log_;
};

}  // namespace relaysim::sim::outbox
