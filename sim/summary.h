// Run reports: the terminal summary a person reads and the JSON a machine reads. The generic parts
// (the run, the invariants, the expectations, how it ended, the verdict) are here; each system
// adds its own section (SystemReport).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <span>
#include <string>

#include "sim/run.h"

namespace relaysim::sim {

struct WallStats {
  double seconds = 0.0;  // measured by the caller; the simulator never reads a wall clock
};

void print_summary(std::ostream& out, const RunResult& r, const WallStats& wall);
nlohmann::json to_json(const RunResult& r, const WallStats& wall);
// One drain of `backlog.drains` (`group_names`: the system's groups, which its GroupDrains index):
// the JSON a simulated run writes, and a judged live run's too.
nlohmann::json drain_json(const Drain& d, std::span<const std::string> group_names);
// Text for JSON: bytes that are not UTF-8 (a file name is any bytes) become U+FFFD, so writing
// the JSON never fails.
std::string json_text(const nlohmann::json& j, int indent = 2);

}  // namespace relaysim::sim
