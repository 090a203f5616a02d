#include "sim/outbox/log_checker.h"

#include <string>

#include "model/core/assert.h"

namespace relaysim::sim::outbox {

using namespace relaysim::outbox;

LogChecker::LogChecker(const OutboxSpec& spec, Ledger& ledger)
    : violate_(ledger), consumed_(spec.log.partitions), checked_(spec.log.partitions, 0) {
  RELAYSIM_ASSERT(spec.log.partitions >= 1, "a log has partitions");
}

void LogChecker::on(const LogDeduped& e) {
  if (e.same) return;
  violate_(Invariant::log, e.at, e.record.ref(),
           "the log acknowledged a record of attempt " + std::to_string(e.record.attempt) +
               " without writing it: its producer session had written another record under sequence " +
               std::to_string(e.sequence));
}

void LogChecker::on(const Consumed& e) {
  RELAYSIM_ASSERT(e.partition < consumed_.size(), "a partition of the log");
  std::vector<bool>& done = consumed_[e.partition];
  if (done.size() <= e.offset) done.resize(e.offset + 1, false);
  done[e.offset] = true;
}

void LogChecker::on(const GroupCommitted& e) {
  if (!e.applied) return;
  RELAYSIM_ASSERT(e.partition < checked_.size(), "a partition of the log");
  std::uint64_t& checked = checked_[e.partition];
  const std::vector<bool>& done = consumed_[e.partition];
  for (; checked < e.offset; ++checked) {
    if (checked >= done.size() || !done[checked]) {
      violate_(Invariant::log, e.at, {0, 0},
               "the group committed offset " + std::to_string(e.offset) + " of partition " + std::to_string(e.partition) +
                   ", past offset " + std::to_string(checked) + ", which no consumer had finished");
      checked = e.offset;
      break;
    }
  }
}

}  // namespace relaysim::sim::outbox
