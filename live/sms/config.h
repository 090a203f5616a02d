// The configuration file of `relaysim serve` for the SMS gateway (`system: sms`): a `serve:`
// section (where to listen, the database, Redis, the providers, the token secret), a `platform:`
// section and a `business:` section read by the very schemas that read a scenario's
// `sms.platform` and a business's policy, so a gateway tried in the simulator is served as it was
// tried, and a typo gets the same located error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "live/http_call.h"
#include "model/core/time.h"
#include "model/sms/config.h"
#include "model/store/sqlite_db.h"
#include "sim/scenario/schema.h"

namespace relaysim::live::sms {

namespace model = relaysim::sms;

// A provider the gateway submits to (docs/live.md has the protocol).
struct ProviderEndpoint {
  std::string name;
  std::string url;             // where a submit is POSTed
  std::string receipt_secret;  // the Bearer token its delivery receipts carry
  bool operator==(const ProviderEndpoint&) const = default;
};

struct SmsServeConfig {
  model::PlatformConfig platform{};
  // The policy of every business (their ids come with their applications, while the gateway runs).
  model::BusinessPolicy business{};
  std::string listen = "127.0.0.1:8090";
  std::string database = "relaysim-sms.db";
  std::string directory;  // the recipient directory's file (live/sms/directory.h); empty: none
  Durability durability = Durability::full;
  // Where the shared limits live: "HOST:PORT" (a numeric address) or "unix:PATH". Empty: no
  // Redis, and then no shared limit may be configured.
  std::string redis;
  std::string token_secret;  // the HS256 key of the businesses' tokens
  std::vector<ProviderEndpoint> providers;
  std::uint32_t pod = 1;
  Duration poll = std::chrono::seconds(1);
  Duration drain_timeout = std::chrono::seconds(30);
  Duration keep_alive = std::chrono::seconds(1);
  // Not a key of the file: `serve --events FILE` appends the model's events there, for
  // `relaysim judge` (live/sms/event_log.h). Empty: no log.
  std::string events;
  bool operator==(const SmsServeConfig&) const = default;
};

// The shortest token secret taken: HS256 wants a key as long as its hash (RFC 7518, 3.2).
inline constexpr std::size_t kMinTokenSecret = 32;
inline constexpr std::size_t kMinReceiptSecret = 16;

// Reads and checks the file. Throws sim::ScenarioError naming the file, line, column and key.
SmsServeConfig read_serve_config(const std::string& path);
SmsServeConfig parse_serve_config(std::string_view text, const std::string& file);

// The reference tables of the format (docs/live.md).
std::vector<sim::DocTable> serve_config_reference();

}  // namespace relaysim::live::sms
