// The outbox relay as the generic spine sees it (sim/system.h).
#pragma once

#include "sim/system.h"

namespace relaysim::sim::outbox {

const System& system();

}  // namespace relaysim::sim::outbox
