// A simulated dependency's outages and slowdowns on a run's timeline (sim/report/series.h): what
// the systems put beside their crashes and breaker changes. Here, above both the world and the
// report's vocabulary, so that neither includes the other.
#pragma once

#include <string_view>
#include <vector>

#include "sim/report/series.h"
#include "sim/world/distribution.h"

namespace relaysim::sim {

// A dependency's outages and slowdowns on a run's timeline, as `subject` ("serviceb").
void add_to_timeline(const std::vector<Outage>& outages, std::string_view subject, std::vector<TimelineEvent>& out);
void add_to_timeline(const std::vector<Slowdown>& slowdowns, std::string_view subject, std::vector<TimelineEvent>& out);

}  // namespace relaysim::sim
