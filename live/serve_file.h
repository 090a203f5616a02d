// What every `relaysim serve` configuration file shares, whichever system it serves: the
// `system:` key that chooses the system (cli/live_commands.cpp reads it first), the durability
// of the database, and how a Redis address is written.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "live/redis_kv.h"
#include "model/core/bounds.h"
#include "model/store/sqlite_db.h"
#include "sim/loader.h"
#include "sim/scenario/schema.h"
#include "sim/scenario/yaml_reader.h"

namespace relaysim::live {

// The largest pod number a process may take (`serve --pod`, serve.pod).
inline constexpr std::uint32_t kMaxPod = 1'000'000;

// How often a serve process looks for work the others sharing its database made due: never so
// often that it asks the database on every turn of its loop.
inline constexpr Bounds<Duration> kPollBounds{std::chrono::milliseconds(10), std::chrono::hours(1), false,
                                              "a shorter poll asks the database on every turn of the loop"};

// The systems `relaysim serve` runs, as a file's `system:` names them.
enum class ServedSystem : std::uint8_t { webhook, sms, outbox };

// `system:` of a serve file: `webhook`, `sms` or `outbox`.
sim::Codec<ServedSystem> system_codec();
// `full`, `normal` or `off`.
sim::Codec<Durability> durability_codec();

// The system the serve file at `path` is for: its `system:` key, `webhook` when it has none.
// Throws sim::ScenarioError (the file cannot be read, is not YAML, or names another system),
// located at the key.
ServedSystem served_system(const std::string& path);

// A section of a serve file read by another schema into one member of the file's configuration:
// a `platform:` section read by the very schema that reads a scenario's, so a system tried in the
// simulator is served as it was tried, with the same located errors.
template <class Config, class Section>
sim::Codec<Config> section_codec(std::string kind, const sim::Schema<Section>& schema, Section Config::*member) {
  return sim::Codec<Config>{
      std::move(kind),
      [&schema, member](const sim::Reader& r, const YAML::Node& n, const std::string& p, Config& c) {
        schema.read(r, n, p, c.*member);
      },
      [&schema, member](YAML::Emitter& e, const Config& v, const Config& d) { schema.emit(e, v.*member, d.*member); },
      {}};
}

// Reads a whole serve file from `text` with `schema` (File holds the `system:` key and the
// sections). Throws sim::ScenarioError naming the file, line, column and key.
template <class File>
File parse_serve_file(const sim::Schema<File>& schema, std::string_view text, const std::string& file) {
  const YAML::Node root = sim::parse_yaml(text, file);
  const sim::Reader r(file);
  File out;
  try {
    schema.read(r, root, "", out);
  } catch (const YAML::Exception& e) {
    r.fail_mark(e.mark, "", e.msg);
  }
  return out;
}

// The same, from the file at `path`.
template <class File>
File read_serve_file(const sim::Schema<File>& schema, const std::string& path) {
  const sim::ScenarioText t = sim::read_scenario_file(path);
  return parse_serve_file(schema, t.text, t.name);
}

// The reference table of a `serve:` section, as docs/live.md shows it.
template <class Config>
std::vector<sim::DocTable> serve_reference(const sim::Schema<Config>& schema) {
  std::vector<sim::DocTable> tables;
  static const Config defaults;
  schema.document(tables, "serve", defaults);
  return tables;
}

// "127.0.0.1:6379", "[::1]:6379" or "unix:/run/redis.sock"; nullopt, with `problem`, otherwise.
// The host is a numeric address: hiredis would resolve a name on the loop, blocking it.
std::optional<RedisAddress> redis_address(std::string_view text, std::string& problem);

}  // namespace relaysim::live
