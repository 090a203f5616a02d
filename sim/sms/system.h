// The SMS gateway as a system of the generic spine (sim/system.h).
#pragma once

#include "sim/system.h"

namespace relaysim::sim::sms {

const System& system();

}  // namespace relaysim::sim::sms
