// Writing scenarios back to YAML: the inverse of load_scenario, used to turn a shrunk property
// test failure into a file an engineer can replay with `relaysim run`. Only values that differ
// from the defaults are written, so a small case makes a small file.
#pragma once

#include <string>

#include "sim/scenario/scenario.h"

namespace relaysim::sim {

std::string write_scenario(const Scenario& s);
// A duration in the largest unit that states it exactly: "2h", "90s", "1500ms", "7ns".
std::string write_duration(Duration d);

}  // namespace relaysim::sim
