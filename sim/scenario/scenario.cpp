#include "sim/scenario/scenario.h"

namespace relaysim::sim {

Scenario& Scenario::operator=(const Scenario& o) {
  if (this == &o) return *this;
  file = o.file;
  name = o.name;
  description = o.description;
  seed = o.seed;
  duration = o.duration;
  warmup = o.warmup;
  system = o.system;
  store = o.store;
  crashes = o.crashes;
  pauses = o.pauses;
  store_faults = o.store_faults;
  expect = o.expect;
  oracle = o.oracle;
  spec_ = o.spec_ ? o.spec_->clone() : nullptr;
  return *this;
}

}  // namespace relaysim::sim
