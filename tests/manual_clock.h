// A clock a test sets by hand.
#pragma once

#include "model/core/ports.h"

namespace relaysim::testing {

struct ManualClock final : Clock {
  Time t{};
  Time now() const override { return t; }
};

}  // namespace relaysim::testing
