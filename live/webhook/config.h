// The configuration file of `relaysim serve`: a `serve:` section (where to listen, the database,
// ServiceB, the signing secret) and a `platform:` section read by the very schema that reads a
// scenario's `webhook.platform`, so a platform tried in the simulator is served as it was tried,
// and a typo gets the same located error.
#pragma once

#include <string>
#include <vector>

#include "live/webhook/service.h"
#include "sim/scenario/schema.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

// Reads and checks the file. Throws sim::ScenarioError naming the file, line, column and key.
ServeConfig read_serve_config(const std::string& path);
ServeConfig parse_serve_config(std::string_view text, const std::string& file);

// The reference tables of the format (docs/live.md).
std::vector<sim::DocTable> serve_config_reference();

}  // namespace relaysim::live::webhook
