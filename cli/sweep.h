// `relaysim sweep` and `relaysim merge`: a scenario over a grid of values and seeds, in parallel
// on every core (sim/plan/sweep.h has the table and the sharding).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace relaysim::cli {

struct SweepArgs {
  std::string file;
  std::vector<std::string> vary;            // key.path=values
  std::vector<std::string> sets;            // key.path=value, under every point
  std::optional<std::string> replications;  // default 5
  std::optional<std::string> seed;
  std::string store;
  std::optional<std::string> jobs;          // default: every core
  std::optional<std::string> memory_limit;  // a size, or "none"
  std::optional<std::string> shard;         // I/N
  std::optional<std::string> out;           // a directory
  std::vector<std::string> show;            // metrics for the printed table
  bool quiet = false;
};

struct MergeArgs {
  std::string out;
  std::vector<std::string> parts;
  std::vector<std::string> show;
};

int sweep_command(const SweepArgs& args);
int merge_command(const MergeArgs& args);

}  // namespace relaysim::cli
