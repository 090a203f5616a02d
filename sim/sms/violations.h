// Violations: how the SMS oracle's checkers report a broken S-* invariant (sim/sms/invariants.h)
// to the run's ledger. One helper for all of them, so that every report names its message alike.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "model/core/time.h"
#include "model/sms/types.h"
#include "sim/oracle/ledger.h"
#include "sim/sms/invariants.h"

namespace relaysim::sim::sms {

class Violations {
 public:
  explicit Violations(Ledger& ledger) : ledger_(ledger) {}

  // Reports that `i` broke at `at`: `what` happened to message `id` (0: to no one message, as a
  // pod's mode or a business's quota).
  void operator()(Invariant i, Time at, relaysim::sms::MessageId id, std::string what) const {
    ledger_.violate(index(i), at, id == 0 ? std::string() : "message " + std::to_string(id), std::move(what));
  }

 private:
  Ledger& ledger_;
};

}  // namespace relaysim::sim::sms
