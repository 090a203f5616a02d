// The outbox relay's property suite (sim/props/property.h): one property per O-* invariant family
// on each store, liveness after the faults heal, both stores giving the same run, a case written
// as a file reading back the same, and the same scenario giving the same run twice; and the
// coverage gates a whole run must reach.
#pragma once

#include "sim/props/property.h"

namespace relaysim::sim::outbox::props {

relaysim::props::Suite suite();

}  // namespace relaysim::sim::outbox::props
