// The capacity check: each station of a scenario's pipeline at the load's peak (System::stations,
// the same station model `plan`'s theory reads) against what it can carry. `validate` prints it,
// `run` warns before it starts when a station cannot carry its load, and the run's summary and
// result.json carry it: an overloaded configuration is seen before hours of an overloaded run,
// not after.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "sim/queueing/erlang.h"
#include "sim/scenario/scenario.h"

namespace relaysim::sim {

// The scenario's stations; none when its system has no queueing reading of it. A station whose
// service takes no time is left out: it carries any load.
std::vector<queueing::StationLoad> capacity_check(const Scenario& s);

// One line: "dispatch: 1500/s at the peak keeps 343.4 of 120 dispatch slots busy for 228.9ms each
// (ρ 2.86; at most 524.2/s)".
std::string describe(const queueing::StationLoad& station);
// For a station that cannot carry its load (ρ ≥ 1): what it needs against what it has.
std::string overload_warning(const queueing::StationLoad& station);
// For a smaller copy of a scenario (`run --scale`): each station of `scaled` whose utilisation is
// more than 2% from `full`'s, as its servers could only be rounded, in words.
std::vector<std::string> scale_drift(const Scenario& full, const Scenario& scaled);
// The stations as result.json writes them (docs/outputs.md).
nlohmann::json capacity_json(const std::vector<queueing::StationLoad>& stations);

}  // namespace relaysim::sim
