// The rate limiters' promises (model/resilience/limiters.h) as RapidCheck properties, shared by the
// component tests (tests/property/limiter_property_test.cpp) and the test that proves they catch
// the limiters' planted bugs (tests/property/component_mutants_test.cpp).
#pragma once

namespace relaysim::limiter_props {

// Every take() decides as the reference does (sim/oracle/limiter_reference.h), and retry_after is
// exact: a nanosecond earlier is still refused, at it the call is admitted.
void matches_the_reference();
// The oracle's fast replay (sim/oracle/limit_replay.h) judges every call as the reference does,
// through forced admissions and resets.
void replay_decides_as_the_reference();
// What is admitted never breaks LimiterSpec::bound in any interval.
void keeps_its_stated_bound();
// GCRA and the token bucket decide alike on the same spec and calls.
void gcra_decides_as_the_token_bucket();
// N limiters at share(N) admit together at most N * ceil(limit / N) per window's bound, and no
// more than the whole limit's bound plus the rounding.
void shares_add_up_to_the_limit();
// Pods sharing a limit through the simulated store (SharedLimiter on SimKv), calling at once and
// at random: what the store recorded keeps the spec's bound.
void pods_sharing_a_limit_keep_its_bound();

}  // namespace relaysim::limiter_props
