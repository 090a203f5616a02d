// The webhook platform as a system of the generic spine (sim/system.h).
#pragma once

#include "sim/system.h"

namespace relaysim::sim::webhook {

const System& system();

}  // namespace relaysim::sim::webhook
