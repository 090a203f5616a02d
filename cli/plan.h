// `relaysim plan`: the least value of a resource that meets targets written like `expect:`, found
// by simulation with several seeds per probe, seeded and checked by queueing theory.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace relaysim::cli {

struct PlanArgs {
  std::string file;
  std::string resource;                         // key.path of a whole number: webhook.platform.pods
  std::vector<std::string> targets;             // "latency_p99_s < 30s"
  std::optional<std::string> range;             // FROM..TO (default 1..1024)
  std::vector<std::string> sets;
  std::optional<std::string> replications;      // per probe, to start with (default 5)
  std::optional<std::string> max_replications;  // per probe, at most (default 40)
  std::optional<std::string> seed;
  std::optional<std::string> jobs;
  std::optional<std::string> memory_limit;  // a size, or "none"
  std::optional<std::string> json_path;
  bool quiet = false;
};

int plan_command(const PlanArgs& args);

}  // namespace relaysim::cli
