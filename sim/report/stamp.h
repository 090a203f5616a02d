// What every JSON document relaysim writes opens with, so that a program reading it can tell
// which relaysim wrote it and which layout to expect: `relaysim_version` (the release) and
// `schema` (the document's kind and layout version, raised when a field changes meaning or goes
// away; fields may be added within a version).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace relaysim::sim {

// The documents' kinds and their layout versions (docs/outputs.md describes each).
inline constexpr std::string_view kRunSchema = "relaysim.run/1";      // run --json, result.json
inline constexpr std::string_view kSweepSchema = "relaysim.sweep/1";  // sweep.json, a shard's too
inline constexpr std::string_view kSweepSummarySchema = "relaysim.sweep-summary/1";  // summary.json
inline constexpr std::string_view kPlanSchema = "relaysim.plan/1";    // plan --json

inline void stamp(nlohmann::json& j, std::string_view schema) {
  j["relaysim_version"] = RELAYSIM_VERSION;
  j["schema"] = schema;
}

}  // namespace relaysim::sim
