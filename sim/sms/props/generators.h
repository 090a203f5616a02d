// RapidCheck generators of small, valid SMS scenarios.
//
// A case runs a minute or two of load and then a heal phase long enough for every message to end
// (receipts, retries, limits drained), so it takes milliseconds. Faults are explicit timed lists,
// so RapidCheck shrinks a failing case by removing faults, providers and load one at a time.
// Swarm testing: each case switches on a random subset of trouble kinds (crashes, provider
// outages and slowdowns, lost answers, shared limits and a Redis that fails, small quotas, bad
// tokens, duplicates, bulk and scheduled sends, impatient clients, sync-to-async).
#pragma once

#include <rapidcheck.h>

#include "sim/scenario/scenario.h"

namespace relaysim::sim::sms::props {

rc::Gen<Scenario> scenarios();

}  // namespace relaysim::sim::sms::props
