// `relaysim-mutants mutants`: runs the property suite against every planted bug.
#pragma once

#include <optional>
#include <string>

namespace relaysim::cli {

struct MutantsOptions {
  std::optional<std::string> only;  // one mutant by name
  int cases = 200;                  // RapidCheck cases per property (a quarter on SQLite)
  std::uint64_t seed = 1;
  std::string report = "reports/mutants.md";
  std::string scenarios_dir = "reports/mutants";  // where shrunk scenarios are written
};

// Exit status: 0 when every mutant was caught, 1 when any survived, 2 for bad usage.
int run_mutants(const MutantsOptions& options);

}  // namespace relaysim::cli
