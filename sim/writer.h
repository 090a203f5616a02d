// Writing scenarios back to YAML: the inverse of load_scenario, used to turn a shrunk property
// test failure into a file an engineer can replay with `relaysim run`. Values equal to their
// defaults are left out, so a small case makes a small file.
#pragma once

#include <string>

#include "sim/scenario/scenario.h"

namespace relaysim::sim {

std::string write_scenario(const Scenario& s);

}  // namespace relaysim::sim
