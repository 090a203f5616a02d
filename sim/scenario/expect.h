// Expectations: the `expect:` block of a scenario — comparisons on the run's metrics, each written
// in its metric's unit and refused when it could never hold.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sim/report/metric.h"
#include "sim/scenario/scenario.h"

namespace relaysim::sim {

// Parses "< 0.1%", ">= 3", "0", "== 12.5", "< 30s" for a metric of `unit` into op and value (in
// the unit: a ratio as 0..1, a time in seconds). Returns why it is refused, or nothing.
std::optional<std::string> parse_comparison(std::string_view text, Unit unit, CompareOp& op, double& value);

bool holds(const Expectation& e, double actual);

}  // namespace relaysim::sim
