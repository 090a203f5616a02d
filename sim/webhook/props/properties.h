// The webhook platform's property suite (sim/props/property.h): one property per W-* invariant
// family on each store, liveness after the faults heal, fencing under a lease forced too short,
// both stores giving the same run, and the same scenario giving the same run twice; and the
// coverage gates a whole run must reach.
#pragma once

#include "sim/props/property.h"

namespace relaysim::sim::webhook::props {

relaysim::props::Suite suite();

}  // namespace relaysim::sim::webhook::props
