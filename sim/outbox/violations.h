// Violations: how the outbox oracle's checkers report a broken O-* invariant
// (sim/outbox/invariants.h) to the run's ledger. One helper for all of them, so that every report
// names its message alike.
#pragma once

#include <string>
#include <utility>

#include "model/core/time.h"
#include "model/outbox/types.h"
#include "sim/oracle/ledger.h"
#include "sim/outbox/invariants.h"

namespace relaysim::sim::outbox {

class Violations {
 public:
  explicit Violations(Ledger& ledger) : ledger_(ledger) {}

  // How a report names message `m`: "message 3 of shard 1".
  static std::string subject(relaysim::outbox::MessageRef m) {
    return "message " + std::to_string(m.id) + " of shard " + std::to_string(m.shard);
  }

  // Reports that `i` broke at `at`: `what` happened to message `m` (id 0: to no one message, as a
  // shard's leader or a partition's commits).
  void operator()(Invariant i, Time at, relaysim::outbox::MessageRef m, std::string what) const {
    ledger_.violate(index(i), at, m.id == 0 ? std::string() : subject(m), std::move(what));
  }

 private:
  Ledger& ledger_;
};

}  // namespace relaysim::sim::outbox
