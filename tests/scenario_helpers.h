// What the scenario tests of every system share: where a shipped scenario lives, and a failed
// run's violations and failed expectations as text for an assertion's message.
#pragma once

#include <string>

#include "sim/run.h"

namespace relaysim::sim::testing {

inline std::string scenario_path(const std::string& name) {
  return std::string(RELAYSIM_SOURCE_DIR) + "/scenarios/" + name + ".yaml";
}

inline std::string failures(const RunResult& r) {
  std::string out;
  for (const auto& v : r.ledger.examples()) out += r.ledger.describe(v) + "\n";
  for (const auto& e : r.expectations) {
    if (!e.ok) out += "expectation failed: " + e.expr + " (actual " + std::to_string(e.actual) + ")\n";
  }
  return out;
}

}  // namespace relaysim::sim::testing
