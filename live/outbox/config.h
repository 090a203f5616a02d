// The configuration file of `relaysim serve` for the outbox relay (`system: outbox`): a `serve:`
// section (where the business API listens, each shard's PostgreSQL database, the etcd its leaders
// are elected by, the Redis that holds the log, and the downstream the consumers hand records to)
// and a `platform:` section read by the very schema that reads a scenario's `outbox.platform`, so
// a relay tried in the simulator is served as it was tried, and a typo gets the same located error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/time.h"
#include "model/outbox/config.h"
#include "sim/scenario/schema.h"

namespace relaysim::live::outbox {

struct OutboxServeConfig {
  relaysim::outbox::RelayConfig platform{};
  std::string listen = "127.0.0.1:8092";
  // Each shard's database, in shard order: a libpq connection string.
  std::vector<std::string> shards = {"host=127.0.0.1 port=5432 user=postgres dbname=outbox"};
  std::string etcd = "http://127.0.0.1:2379";  // etcd's client URL (its v3 JSON gateway)
  std::string lease_prefix = "relaysim/outbox/";
  // Where the log lives: "HOST:PORT" (a numeric address) or "unix:PATH".
  std::string redis = "127.0.0.1:6379";
  std::string topic = "outbox";
  std::uint32_t partitions = 12;
  Duration max_poll_interval = std::chrono::minutes(5);
  Duration session_timeout = std::chrono::seconds(10);
  std::string downstream = "http://127.0.0.1:8093/downstream";  // where a consumer POSTs a record
  std::uint32_t pod = 1;
  Duration drain_timeout = std::chrono::seconds(30);
  // Not a key of the file: `serve --events FILE` appends the pod's events there, for
  // `relaysim judge` (live/outbox/event_log.h).
  std::string events;
  // Not a key of the file: `serve --crash-after-commit N` — a test's crash point (event_log.h).
  std::optional<std::uint32_t> crash_after_commit;
  bool operator==(const OutboxServeConfig&) const = default;
};

// Reads and checks the file. Throws sim::ScenarioError naming the file, line, column and key.
OutboxServeConfig read_serve_config(const std::string& path);
OutboxServeConfig parse_serve_config(std::string_view text, const std::string& file);

// The reference tables of the format (docs/live.md).
std::vector<sim::DocTable> serve_config_reference();

}  // namespace relaysim::live::outbox
