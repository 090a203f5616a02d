// RapidCheck generators of small, valid outbox scenarios.
//
// A case runs a minute or two of business load and then a heal phase long enough for every
// message to end (its retries, a lease moving, the rescuer's timeout), so it takes milliseconds.
// Faults are explicit timed lists, so RapidCheck shrinks a failing case by removing faults, load
// and shards one at a time. Swarm testing: each case switches on a random subset of trouble kinds
// (pod crashes and pauses past the lease, broker outages and lost acknowledgements, a slow or
// failing downstream, handler deaths, slow polls, shard and store faults, rollbacks, per-key
// ordering, mark-then-publish, few attempts).
#pragma once

#include <rapidcheck.h>

#include "sim/scenario/scenario.h"

namespace relaysim::sim::outbox::props {

rc::Gen<Scenario> scenarios();

}  // namespace relaysim::sim::outbox::props
