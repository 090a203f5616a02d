#include "live/outbox/config.h"

#include <libpq-fe.h>

#include "live/http_call.h"
#include "live/http_server.h"
#include "live/outbox/redis_log.h"
#include "live/serve_file.h"
#include "model/core/assert.h"
#include "sim/outbox/log.h"
#include "sim/outbox/spec.h"
#include "sim/scenario/yaml_reader.h"

namespace relaysim::live::outbox {

namespace {

using sim::Codec;
using sim::Map;
using sim::Reader;
using sim::Schema;

struct ServeFile {
  ServedSystem system = ServedSystem::outbox;
  OutboxServeConfig config;
  bool operator==(const ServeFile&) const = default;
};

// Why `conninfo` is not a libpq connection string; empty when it is one. libpq parses it as it
// would to connect, without connecting.
std::string conninfo_problem(const std::string& conninfo) {
  if (conninfo.empty()) return "must not be empty";
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  std::string problem;
  if (options == nullptr) problem = error != nullptr ? std::string(error) : std::string("not a libpq connection string");
  if (!problem.empty() && problem.back() == '\n') problem.pop_back();
  if (options != nullptr) PQconninfoFree(options);
  if (error != nullptr) PQfreemem(error);
  return problem;
}

void check_serve(const Reader&, const Map& m, OutboxServeConfig& c) {
  std::string problem;
  if (!parse_listen(c.listen, problem)) m.fail_at("listen", problem);
  if (c.shards.empty()) m.fail_at("shards", "the relay needs a database for each shard");
  for (std::size_t i = 0; i < c.shards.size(); ++i) {
    if (const std::string why = conninfo_problem(c.shards[i]); !why.empty()) {
      m.fail_at("shards", "shard " + std::to_string(i) + ": " + why);
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (c.shards[i] == c.shards[j]) {
        m.fail_at("shards", "shards " + std::to_string(j) + " and " + std::to_string(i) +
                                " are one database: each shard's messages and fence are its own");
      }
    }
  }
  for (const auto& [key, url] : {std::pair<const char*, const std::string&>{"etcd", c.etcd}, {"downstream", c.downstream}}) {
    const std::optional<Url> u = parse_url(url, problem);
    if (!u) m.fail_at(key, problem);
    if (u->scheme != "http") m.fail_at(key, "is called over plain http (a loopback or private address)");
  }
  if (c.lease_prefix.empty()) m.fail_at("lease_prefix", "must not be empty: the leases' keys would be the bare names");
  if (!redis_address(c.redis, problem)) m.fail_at("redis", problem);
  if (c.topic.find_first_of("{}") != std::string::npos) {
    m.fail_at("topic", "must not hold braces: it is the log's hash tag ({topic})");
  }
}

const Schema<OutboxServeConfig>& serve_schema() {
  static const Schema<OutboxServeConfig> schema = [] {
    using sim::outbox::LogSpec;
    Schema<OutboxServeConfig> s(sim::Style::block,
                                "Where the relay's business API listens, its shards' databases, the etcd its leaders are "
                                "elected by, the Redis its log lives in, and the downstream its consumers call.");
    s.key("listen", &OutboxServeConfig::listen, sim::text_codec(),
          "the business API's address, `HOST:PORT` (`127.0.0.1:0`: any free port, printed at start)");
    s.key("shards", &OutboxServeConfig::shards, sim::list_codec(sim::text_codec(), "list of libpq connection strings"),
          "each shard's PostgreSQL database, in shard order (`host=127.0.0.1 port=5432 user=postgres dbname=s0`); as "
          "many as `platform.shards`");
    s.key("etcd", &OutboxServeConfig::etcd, sim::text_codec(),
          "etcd's client URL; the shards' leases are keys there (docs/live.md)");
    s.key("lease_prefix", &OutboxServeConfig::lease_prefix, sim::text_codec(),
          "what the leases' keys in etcd begin with; relays sharing one etcd for different outboxes take different ones");
    s.key("redis", &OutboxServeConfig::redis, sim::text_codec(),
          "the Redis the log lives in: `HOST:PORT` (a numeric address) or `unix:PATH`; run it with `appendonly yes`, "
          "`appendfsync always` and `maxmemory-policy noeviction` (docs/live.md)");
    s.key("topic", &OutboxServeConfig::topic, sim::name_codec(), "the log's name in Redis");
    s.key("partitions", &OutboxServeConfig::partitions, sim::integer_codec(LogSpec::kPartitions),
          "the topic's partitions; an entity's records all go to one (by its key). Every process takes the same");
    s.key("max_poll_interval", &OutboxServeConfig::max_poll_interval, sim::duration_codec(LogSpec::kMaxPollInterval),
          "a consumer that does not poll again within this is evicted; its records go to others");
    s.key("session_timeout", &OutboxServeConfig::session_timeout, sim::duration_codec(kLiveSessionTimeout),
          "a consumer whose heartbeats stop this long (its process died) is evicted");
    s.key("downstream", &OutboxServeConfig::downstream, sim::text_codec(),
          "where a consumer hands a record to be applied: an http URL (`relaysim world` serves one)");
    s.key("pod", &OutboxServeConfig::pod, sim::integer_codec<std::uint32_t>(1, kMaxPod),
          "this process's pod number; each process of the relay takes its own");
    s.key("drain_timeout", &OutboxServeConfig::drain_timeout, sim::duration_codec(),
          "on SIGTERM, how long to wait for the publishes and handlings in flight before exiting");
    s.check(check_serve);
    return s;
  }();
  return schema;
}

const Schema<ServeFile>& file_schema() {
  static const Schema<ServeFile> schema = [] {
    Schema<ServeFile> s(sim::Style::block, "A `relaysim serve` configuration file for the outbox relay.");
    s.key("system", &ServeFile::system, system_codec(), "`outbox`: this file serves the outbox relay",
          sim::opt::required());
    s.key("serve", &ServeFile::config, sim::map_codec(serve_schema()), "the service itself", sim::opt::required());
    s.key("platform", &ServeFile::config,
          section_codec("mapping, as a scenario's `outbox.platform`", sim::outbox::platform_schema(),
                        &OutboxServeConfig::platform),
          "the relay's policies: the keys of a scenario's `outbox.platform` (docs/scenario-format.md). `pods` is how "
          "many processes run the relay");
    s.check([](const Reader&, const Map& m, ServeFile& f) {
      RELAYSIM_ASSERT(f.system == ServedSystem::outbox, "cli/live_commands.cpp reads a file by its system");
      m.refuse(relaysim::outbox::validate(f.config.platform), "platform");
      if (f.config.shards.size() != f.config.platform.shards) {
        m.fail_at("serve.shards", "names " + std::to_string(f.config.shards.size()) + " databases, but platform.shards is " +
                                      std::to_string(f.config.platform.shards) + ": one database per shard");
      }
      if (f.config.pod > f.config.platform.pods) {
        m.fail_at("serve.pod", "is " + std::to_string(f.config.pod) + ", but platform.pods is " +
                                   std::to_string(f.config.platform.pods) + ": pods are numbered 1 to platform.pods");
      }
    });
    return s;
  }();
  return schema;
}

}  // namespace

OutboxServeConfig parse_serve_config(std::string_view text, const std::string& file) {
  return parse_serve_file(file_schema(), text, file).config;
}

OutboxServeConfig read_serve_config(const std::string& path) { return read_serve_file(file_schema(), path).config; }

std::vector<sim::DocTable> serve_config_reference() { return serve_reference(serve_schema()); }

}  // namespace relaysim::live::outbox
