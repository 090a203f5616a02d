// Planted bugs in the shared resilience components (see model/core/mutants.h). Each system that
// uses a component lists its mutants among its own, so its properties must catch them.
#pragma once

#include "model/core/mutants.h"

namespace relaysim::mutant {

inline constexpr Mutant breaker_never_opens{"breaker_never_opens", "the ServiceB breaker never trips"};
inline constexpr Mutant half_open_unlimited{"half_open_unlimited",
                                            "half-open admits every call, not a bounded number of probes"};
inline constexpr Mutant breaker_closes_early{"breaker_closes_early", "half-open closes after one successful probe"};
inline constexpr Mutant breaker_ignores_min_calls{"breaker_ignores_min_calls",
                                                  "the breaker trips on a failure rate over fewer than min_calls"};
inline constexpr Mutant breaker_counts_stale_results{"breaker_counts_stale_results",
                                                     "a closed breaker counts results of calls admitted before it closed"};

inline constexpr Mutant window_restarts_on_send{
    "window_restarts_on_send",
    "the sliding counter's window restarts from the latest send, so it never closes for a steady sender"};
inline constexpr Mutant gcra_burst_off_by_one{"gcra_burst_off_by_one",
                                              "GCRA admits burst + 1 at once (redis-cell's max_burst read as the burst)"};
inline constexpr Mutant limiter_share_undivided{
    "limiter_share_undivided", "a pod's local share of a cluster-wide limit is the whole limit, not limit/N"};

inline constexpr Mutant limiter_check_then_set{
    "limiter_check_then_set", "a shared limit is checked in one store call and recorded in another, not atomically"};

}  // namespace relaysim::mutant
