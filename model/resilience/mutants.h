// Planted bugs in the shared resilience components (see model/core/mutants.h). Each system that
// uses a component lists its mutants among its own, so its properties must catch them.
#pragma once

#include "model/core/mutants.h"

namespace relaysim::mutant {

inline constexpr Mutant breaker_never_opens{"breaker_never_opens", "the ServiceB breaker never trips"};
inline constexpr Mutant half_open_unlimited{"half_open_unlimited",
                                            "half-open admits every call, not a bounded number of probes"};

}  // namespace relaysim::mutant
