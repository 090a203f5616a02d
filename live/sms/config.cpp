#include "live/sms/config.h"

#include "live/http_server.h"
#include "model/core/assert.h"
#include "live/serve_file.h"
#include "sim/loader.h"
#include "sim/scenario/yaml_reader.h"
#include "sim/sms/spec.h"

namespace relaysim::live::sms {

namespace {

using sim::Codec;
using sim::Map;
using sim::Reader;
using sim::Schema;

struct ServeFile {
  ServedSystem system = ServedSystem::sms;
  SmsServeConfig config;
  bool operator==(const ServeFile&) const = default;
};

void check_provider(const Reader&, const Map& m, ProviderEndpoint& p) {
  std::string problem;
  if (!parse_url(p.url, problem)) m.fail_at("url", problem);
  if (p.receipt_secret.size() < kMinReceiptSecret) {
    m.fail_at("receipt_secret", "must be at least " + std::to_string(kMinReceiptSecret) +
                                    " characters: it is all that proves a receipt came from this provider");
  }
}

const Schema<ProviderEndpoint>& provider_schema() {
  static const Schema<ProviderEndpoint> schema = [] {
    Schema<ProviderEndpoint> s(sim::Style::flow, "An SMS provider the gateway submits to, in routing order.");
    s.key("name", &ProviderEndpoint::name, sim::name_codec(), "its name, which its receipts give", sim::opt::required());
    s.key("url", &ProviderEndpoint::url, sim::text_codec(), "where a submit is POSTed (docs/live.md: the protocol)",
          sim::opt::required());
    s.key("receipt_secret", &ProviderEndpoint::receipt_secret, sim::text_codec(),
          "the Bearer token its delivery receipts carry (at least 16 characters)", sim::opt::required());
    s.check(check_provider);
    return s;
  }();
  return schema;
}

void check_serve(const Reader&, const Map& m, SmsServeConfig& c) {
  std::string problem;
  if (!parse_listen(c.listen, problem)) m.fail_at("listen", problem);
  if (c.database.empty()) m.fail_at("database", "must not be empty");
  if (!c.redis.empty() && !redis_address(c.redis, problem)) m.fail_at("redis", problem);
  if (c.token_secret.size() < kMinTokenSecret) {
    m.fail_at("token_secret", "must be at least " + std::to_string(kMinTokenSecret) +
                                  " bytes: the HS256 key of the businesses' tokens is as long as its hash");
  }
  if (c.providers.empty()) m.fail_at("providers", "the gateway needs at least one provider");
  for (std::size_t i = 0; i < c.providers.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (c.providers[i].name == c.providers[j].name) {
        m.fail_at("providers", "two providers are called '" + c.providers[i].name + "': a receipt names its provider");
      }
    }
  }
}

const Schema<SmsServeConfig>& serve_schema() {
  static const Schema<SmsServeConfig> schema = [] {
    Schema<SmsServeConfig> s(sim::Style::block,
                             "Where the gateway listens, what it stores in, where its shared limits live, and whom it "
                             "submits to.");
    s.key("listen", &SmsServeConfig::listen, sim::text_codec(),
          "the API's address, `HOST:PORT` (`127.0.0.1:0`: any free port, printed at start)");
    s.key("database", &SmsServeConfig::database, sim::text_codec(),
          "the SQLite database file (WAL); several `serve` processes may share one on one machine");
    s.key("directory", &SmsServeConfig::directory, sim::text_codec(),
          "the recipient directory campaigns choose from: an SQLite file `relaysim world --serve` writes from its "
          "scenario's `sms.directory`. Empty: no directory (a campaign chooses no one)");
    s.key("durability", &SmsServeConfig::durability, durability_codec(),
          "`full` (synchronous=FULL): an accepted message survives a power loss. `normal`: it survives the process's "
          "crash, but a power loss may take the last commits. `off`: never for use");
    s.key("redis", &SmsServeConfig::redis, sim::text_codec(),
          "where the shared limits live: `HOST:PORT` (a numeric address) or `unix:PATH`. While Redis refuses, times "
          "out or restarts empty, each process limits at its share (the platform limit's `when_down`); none: no "
          "shared limit may be configured",
          sim::opt::shown("none"));
    s.key("token_secret", &SmsServeConfig::token_secret, sim::text_codec(),
          "the HS256 key the businesses' tokens are signed with (at least 32 bytes); every process sharing the "
          "database takes the same",
          sim::opt::required());
    s.key("providers", &SmsServeConfig::providers, sim::list_codec(sim::map_codec(provider_schema())),
          "the providers, in routing order", sim::opt::required());
    s.key("pod", &SmsServeConfig::pod, sim::integer_codec<std::uint32_t>(1, kMaxPod),
          "this process's pod number, recorded with its claims; each process sharing the database takes its own");
    s.key("poll", &SmsServeConfig::poll, sim::duration_codec(kPollBounds),
          "how often to look for work other processes sharing the database made due");
    s.key("drain_timeout", &SmsServeConfig::drain_timeout, sim::duration_codec(),
          "on SIGTERM, how long to wait for the submits in flight before exiting");
    s.key("keep_alive", &SmsServeConfig::keep_alive,
          sim::duration_codec(Bounds<Duration>{Duration::zero(), std::chrono::hours(1), false, nullptr}),
          "how long a connection to a provider stays open, unused, for the next submit; `0s`: one per submit");
    s.check(check_serve);
    return s;
  }();
  return schema;
}

const Schema<ServeFile>& file_schema() {
  static const Schema<ServeFile> schema = [] {
    Schema<ServeFile> s(sim::Style::block, "A `relaysim serve` configuration file for the SMS gateway.");
    s.key("system", &ServeFile::system, system_codec(), "`sms`: this file serves the SMS gateway",
          sim::opt::required());
    s.key("serve", &ServeFile::config, sim::map_codec(serve_schema()), "the service itself", sim::opt::required());
    s.key("platform", &ServeFile::config,
          section_codec("mapping, as a scenario's `sms.platform`", sim::sms::platform_schema(), &SmsServeConfig::platform),
          "the gateway's policies: the keys of a scenario's `sms.platform` (docs/scenario-format.md). `pods` is how "
          "many processes share the limits: each limits at its share while Redis is down");
    s.key("business", &ServeFile::config,
          section_codec("mapping, as a scenario business's `retry` and `limit`", sim::sms::policy_schema(),
                        &SmsServeConfig::business),
          "every business's own policy: its retries and its shared limit");
    s.check([](const Reader&, const Map& m, ServeFile& f) {
      RELAYSIM_ASSERT(f.system == ServedSystem::sms, "cli/live_commands.cpp reads a file by its system");
      m.refuse(model::validate(f.config.platform, f.config.providers.size()), "platform");
      m.refuse(model::validate(f.config.business), "business");
      const bool limited = f.config.platform.cluster_limit || f.config.business.limit;
      if (limited && f.config.redis.empty()) {
        m.fail_at(f.config.platform.cluster_limit ? "platform.limit" : "business.limit",
                  "a shared limit lives in Redis: give serve.redis");
      }
    });
    return s;
  }();
  return schema;
}

}  // namespace

SmsServeConfig parse_serve_config(std::string_view text, const std::string& file) {
  return parse_serve_file(file_schema(), text, file).config;
}

SmsServeConfig read_serve_config(const std::string& path) { return read_serve_file(file_schema(), path).config; }

std::vector<sim::DocTable> serve_config_reference() { return serve_reference(serve_schema()); }

}  // namespace relaysim::live::sms
