// Units in scenario files: durations ("250ms", "2h", "1.5s", "1d"), rates ("800/s", "30/min"),
// fractions ("5%", or a plain number in [0, 1]). Each parser returns false on malformed text.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "model/core/bounds.h"
#include "model/core/time.h"

namespace relaysim::sim {

// The longest duration (and the latest time) a scenario may name: ten years. Every sum the
// simulator forms of a few scenario durations (a creation time plus a deadline plus timeouts)
// then stays far inside Duration's range.
inline constexpr Duration kMaxDuration = kLongestDuration;

// Accepts only what is at most kMaxDuration.
bool parse_duration(std::string_view text, Duration& out);
// The same text as a number of seconds, without an upper bound (for messages about the bound).
bool parse_duration_seconds(std::string_view text, double& seconds);
bool parse_rate(std::string_view text, double& per_second);
bool parse_fraction(std::string_view text, double& out);

// `s` without the spaces and tabs at either end.
std::string_view trim_blanks(std::string_view s);

// Edit distance, for did-you-mean suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace relaysim::sim
