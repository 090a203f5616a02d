// Expectations: the `expect:` block of a scenario — simple comparisons on the run's metrics.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/scenario.h"

namespace relaysim::sim {

struct MetricInfo {
  std::string_view name;
  std::string_view meaning;
};

// Every metric an expectation may name, with what it means (docs/scenario-format.md lists them).
const std::vector<MetricInfo>& metric_catalog();
bool is_metric(std::string_view name);

// Parses "< 0.1%", ">= 3", "0", "== 12.5" into op/value/percent. Returns false if malformed.
bool parse_comparison(std::string_view text, CompareOp& op, double& value, bool& percent);
std::string_view to_string(CompareOp op);

bool holds(const Expectation& e, double actual);

}  // namespace relaysim::sim
