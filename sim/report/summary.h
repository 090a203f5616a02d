// Run reports: the terminal summary a person reads and the JSON a machine reads.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/run.h"

namespace relaysim::sim {

struct WallStats {
  double seconds = 0.0;  // measured by the caller; the simulator never reads a wall clock
};

void print_summary(std::ostream& out, const RunResult& r, const WallStats& wall);
nlohmann::json to_json(const RunResult& r, const WallStats& wall);

}  // namespace relaysim::sim
