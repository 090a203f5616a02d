// StoreFaults: the scenario's store faults, asked by a system's store on every call. Generic: what
// fails and when; each system's store facade applies it to its own store (for SQLite, in the
// middle of a real transaction, through the database's FailPoint).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/store/store_error.h"
#include "sim/scenario/scenario.h"

namespace relaysim::sim {

class StoreFaults {
 public:
  explicit StoreFaults(const Scenario& s);

  bool any() const { return !windows_.empty() || !crashes_.empty(); }
  // The failure a store call made at `now` meets, if any; `writes`: the call changes something.
  std::optional<StoreFailure> failure(Time now, bool writes) const;
  // The crash due in the middle of `pod`'s write at `now`, if one is: each is taken once.
  std::optional<CrashFault> take_crash(std::uint32_t pod, Time now);
  // How long within [from, to] the store was failing: nothing can be finished then, so deadline
  // bounds stretch by it.
  Duration downtime(Time from, Time to) const;
  // The crashes in the middle of a write due before `end` that never came, one sentence each:
  // the pod wrote nothing from their time to the end of the run.
  std::vector<std::string> never_happened(Time end) const;

 private:
  std::vector<StoreFault> windows_;
  std::vector<CrashFault> crashes_;  // the during_write ones not yet taken
};

}  // namespace relaysim::sim
