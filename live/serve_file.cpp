#include "live/serve_file.h"

#include <charconv>

#include "live/http_server.h"
#include "sim/loader.h"
#include "sim/scenario/yaml_reader.h"

namespace relaysim::live {

namespace {

const std::vector<std::pair<std::string, ServedSystem>>& systems() {
  static const std::vector<std::pair<std::string, ServedSystem>> options = {
      {"webhook", ServedSystem::webhook}, {"sms", ServedSystem::sms}, {"outbox", ServedSystem::outbox}};
  return options;
}

}  // namespace

sim::Codec<ServedSystem> system_codec() { return sim::choice_codec(systems()); }

sim::Codec<Durability> durability_codec() {
  return sim::choice_codec<Durability>({{"full", Durability::full}, {"normal", Durability::normal}, {"off", Durability::off}});
}

ServedSystem served_system(const std::string& path) {
  const sim::ScenarioText t = sim::read_scenario_file(path);
  const YAML::Node root = sim::parse_yaml(t.text, t.name);
  if (!root.IsMap() || !root["system"]) return ServedSystem::webhook;
  const sim::Reader r(t.name);
  try {
    return r.choice(root["system"], "system", systems());
  } catch (const YAML::Exception& e) {
    r.fail_mark(e.mark, "system", e.msg);
  }
}

std::optional<RedisAddress> redis_address(std::string_view text, std::string& problem) {
  RedisAddress a;
  if (text.starts_with("unix:")) {
    a.unix_socket = std::string(text.substr(5));
    if (a.unix_socket.empty() || a.unix_socket.front() != '/') {
      problem = "a unix socket is written unix:/absolute/path, got '" + std::string(text) + "'";
      return std::nullopt;
    }
    return a;
  }
  const std::optional<boost::asio::ip::tcp::endpoint> at = parse_listen(text, problem);
  if (!at || text.starts_with(":")) {
    problem = "expected HOST:PORT with a numeric host (127.0.0.1:6379) or unix:/path, got '" + std::string(text) + "'" +
              (problem.empty() ? "" : ": " + problem);
    return std::nullopt;
  }
  if (at->port() == 0) {
    problem = "Redis listens on a port: 0 is none";
    return std::nullopt;
  }
  a.host = at->address().to_string();
  a.port = at->port();
  return a;
}

}  // namespace relaysim::live
