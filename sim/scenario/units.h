// Units in scenario files: durations ("250ms", "2h", "1.5s", "1d"), rates ("800/s", "30/min"),
// fractions ("5%", or a plain number in [0, 1]). Each parser returns false on malformed text.
#pragma once

#include <string>
#include <string_view>

#include "model/core/time.h"

namespace relaysim::sim {

bool parse_duration(std::string_view text, Duration& out);
bool parse_rate(std::string_view text, double& per_second);
bool parse_fraction(std::string_view text, double& out);

// Edit distance, for did-you-mean suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace relaysim::sim
