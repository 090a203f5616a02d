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

// One value a user sets over a scenario file's own, without editing it (`relaysim run --set`, the
// axes of a sweep): `webhook.platform.pods=8`, `webhook.endpoints.0.error_rate=5%`. The path
// names mappings by key and sequences by index from 0; the value is YAML (`[1, 2]` and
// `{at: 1m}` work). A key the file does not have is added, and then read as strictly as if the
// file had it: a misspelt key is an unknown key with a suggestion.
struct Override {
  std::string path;
  std::string value;
  // Where it came from, as an error names it: "--set", or "--vary"/"--range" for a sweep's or a
  // plan's value (an error in the value is the command line's, not the file's).
  std::string origin = "--set";
};
// "key.path=value" as an Override; throws ScenarioError (file "--set") when it is not one.
Override parse_override(std::string_view text);
std::string to_string(const Override& o);

// A scenario file's text, read once (standard input can be read only once; a sweep reads the
// scenario at every point of its grid), and the name errors give it. Throws ScenarioError.
struct ScenarioText {
  std::string name;
  std::string text;
};
ScenarioText read_scenario_file(const std::string& path);

// Reads and validates a scenario file, with `overrides` applied in order. Throws ScenarioError.
Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides = {});
// The same for text in memory; `file` names it in errors.
Scenario parse_scenario(std::string_view text, const std::string& file, const std::vector<Override>& overrides = {});

// The top level's keys. The system's section is read (and written) just before the key named
// kSectionBefore: after the keys it depends on (duration, system, store), before those that
// depend on it (faults name its pods, expect its metrics).
const Schema<Scenario>& scenario_schema();
inline constexpr std::string_view kSectionBefore = "faults";

// The reference tables of the top level and of every system's section.
std::vector<DocTable> scenario_reference();

}  // namespace relaysim::sim
