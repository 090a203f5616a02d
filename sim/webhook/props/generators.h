// RapidCheck generators of small, valid webhook scenarios.
//
// A case runs a few minutes of virtual time with deadlines of minutes, so it takes milliseconds.
// Faults are explicit timed lists (never a seed), so RapidCheck shrinks a failing case by
// removing faults, endpoints and load one at a time. Swarm testing: each case switches on a random
// subset of fault kinds, so rare combinations are not drowned out by everything-at-once cases.
#pragma once

#include <rapidcheck.h>

#include "sim/scenario/scenario.h"

namespace relaysim::sim::webhook::props {

struct GenOptions {
  // Force a lease shorter than lookup + HTTP timeout (allow_unsafe_lease): the known
  // duplicate-delivery configuration, for the fencing property and the "must find it" test.
  bool force_short_lease = false;
};

rc::Gen<Scenario> scenarios(GenOptions options = {});

}  // namespace relaysim::sim::webhook::props
