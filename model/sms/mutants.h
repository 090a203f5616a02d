// The SMS gateway's planted bugs (see model/core/mutants.h). Its property suite must catch every
// one, and those of the shared components it relies on (model/resilience/mutants.h).
#pragma once

#include "model/core/mutants.h"

namespace relaysim::sms::mutant {

inline constexpr Mutant token_scope_unchecked{"token_scope_unchecked",
                                              "a send is accepted for a sender or template its token does not grant"};
inline constexpr Mutant token_expiry_unchecked{"token_expiry_unchecked", "an expired token is accepted"};

}  // namespace relaysim::sms::mutant
