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

}  // namespace relaysim::mutant
