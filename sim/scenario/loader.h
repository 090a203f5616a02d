// Loading scenario files: the generic top level (sim/scenario/scenario.h), then the system's own
// section, read by the system. Strict throughout (sim/scenario/yaml_reader.h): every problem is a
// ScenarioError naming the file, line, column, key path and what was expected.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/scenario.h"
#include "sim/scenario/schema.h"
#include "sim/scenario/yaml_reader.h"

namespace relaysim::sim {

// The largest scenario file read: a scenario is a page or two; anything near this is a mistake.
// A megabyte is also what keeps reading bounded: the YAML reader needs a few hundred bytes of
// memory per value, and 1 MiB of "[a,a,a,...]" is half a million values.
inline constexpr std::size_t kMaxScenarioBytes = 1u << 20;

// Reads and validates a scenario file. Throws ScenarioError.
Scenario load_scenario(const std::string& path);
// The same for text in memory; `file` names it in errors.
Scenario parse_scenario(std::string_view text, const std::string& file);

// The top level's keys. The system's section is read (and written) just before the key named
// kSectionBefore: after the keys it depends on (duration, system, store), before those that
// depend on it (faults name its pods, expect its metrics).
const Schema<Scenario>& scenario_schema();
inline constexpr std::string_view kSectionBefore = "faults";

// The reference tables of the top level and of every system's section.
std::vector<DocTable> scenario_reference();

}  // namespace relaysim::sim
