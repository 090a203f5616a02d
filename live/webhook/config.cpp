#include "live/webhook/config.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "live/http_call.h"
#include "live/http_server.h"
#include "live/serve_file.h"
#include "model/core/assert.h"
#include "model/core/bounds.h"
#include "model/webhook/signature.h"
#include "sim/loader.h"
#include "sim/scenario/yaml_reader.h"
#include "sim/webhook/spec.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

namespace {

using sim::Codec;
using sim::Map;
using sim::Reader;
using sim::Schema;

struct ServeFile {
  ServedSystem system = ServedSystem::webhook;
  ServeConfig config;
  bool operator==(const ServeFile&) const = default;
};

void check_tenant(const Reader&, const Map& m, ServeConfig::TenantSecret& t) {
  if (!model::SigningKey::parse(t.secret)) {
    m.fail_at("secret", "not a signing key: expected whsec_ followed by base64 of 24 to 64 bytes");
  }
}

const Schema<ServeConfig::TenantSecret>& tenant_schema() {
  static const Schema<ServeConfig::TenantSecret> schema = [] {
    Schema<ServeConfig::TenantSecret> s(sim::Style::flow, "A tenant's own signing key.");
    s.key("cxid", &ServeConfig::TenantSecret::cxid, sim::name_codec(), "the tenant", sim::opt::required());
    s.key("secret", &ServeConfig::TenantSecret::secret, sim::text_codec(), "its key, `whsec_` + base64",
          sim::opt::required());
    s.check(check_tenant);
    return s;
  }();
  return schema;
}

void check_serve(const Reader&, const Map& m, ServeConfig& c) {
  std::string problem;
  if (!parse_listen(c.listen, problem)) m.fail_at("listen", problem);
  const std::optional<Url> u = parse_url(c.serviceb, problem);
  if (!u) m.fail_at("serviceb", problem);
  if (!c.serviceb.empty() && c.serviceb.back() == '/') m.fail_at("serviceb", "give the base URL without the last '/'");
  if (!c.signing_secret.empty() && !model::SigningKey::parse(c.signing_secret)) {
    m.fail_at("signing_secret", "not a signing key: expected whsec_ followed by base64 of 24 to 64 bytes");
  }
  if (c.database.empty()) m.fail_at("database", "must not be empty");
  if (!c.ca_file.empty() && ::access(c.ca_file.c_str(), R_OK) != 0) {
    m.fail_at("ca_file", "cannot read " + c.ca_file + ": " + std::strerror(errno));
  }
}

const Schema<ServeConfig>& serve_schema() {
  static const Schema<ServeConfig> schema = [] {
    Schema<ServeConfig> s(sim::Style::block, "Where the service listens, what it stores in, and what it calls.");
    s.key("listen", &ServeConfig::listen, sim::text_codec(),
          "the API's address, `HOST:PORT` (`127.0.0.1:0`: any free port, printed at start)");
    s.key("database", &ServeConfig::database, sim::text_codec(),
          "the SQLite database file (WAL); several `serve` processes may share one on one machine");
    s.key("durability", &ServeConfig::durability, durability_codec(),
          "`full` (synchronous=FULL): an acknowledged request survives a power loss. `normal`: it survives the "
          "process's crash, but a power loss may take the last commits; a higher ingest rate (reports/performance.md). "
          "`off`: commits in batches, so a crash loses acknowledged requests; it exists to show that the kill -9 test "
          "catches a loss, never for use");
    s.key("group_commit", &ServeConfig::group_commit, sim::flag_codec(),
          "commit the writes one turn of the service's loop makes together: one commit (with `full`, one fsync) "
          "covers every request read in that turn, and each is answered after it (docs/live.md). `false`: one commit "
          "per write, as a baseline to measure against (bench/live_load.py). `durability: off` batches either way");
    s.key("serviceb", &ServeConfig::serviceb, sim::text_codec(),
          "ServiceB's base URL; a lookup is `GET {serviceb}/v1/urls/{cxid}`");
    s.key("signing_secret", &ServeConfig::signing_secret, sim::text_codec(),
          "the Standard Webhooks key deliveries are signed with (`whsec_` + base64); empty: unsigned",
          sim::opt::shown("none"));
    s.key("tenant_secrets", &ServeConfig::tenant_secrets, sim::list_codec(sim::map_codec(tenant_schema())),
          "tenants with keys of their own: their deliveries are signed with it instead of `signing_secret`");
    s.key("allow_addresses", &ServeConfig::allow_addresses,
          sim::list_codec(sim::choice_codec<AddressKind>({{"loopback", AddressKind::loopback},
                                                          {"private", AddressKind::private_network},
                                                          {"link_local", AddressKind::link_local}})),
          "the kinds of non-public address a delivery's URL may resolve to. Refused by default: a URL that ServiceB "
          "holds is the tenant's to choose, and must not reach the platform's own network or a cloud's metadata "
          "service; such a request fails at once with reason `forbidden_address`. ServiceB's own address is not "
          "checked");
    s.key("ca_file", &ServeConfig::ca_file, sim::text_codec(),
          "a PEM file of certificate authorities to trust for https, beside the system's (a private CA)",
          sim::opt::shown("none"));
    s.key("pod", &ServeConfig::pod, sim::integer_codec<std::uint32_t>(1, kMaxPod),
          "this process's pod number, recorded with its claims and attempts");
    s.key("poll", &ServeConfig::poll, sim::duration_codec(kPollBounds),
          "how often to look for work other processes sharing the database created");
    s.key("drain_timeout", &ServeConfig::drain_timeout, sim::duration_codec(),
          "on SIGTERM, how long to wait for the attempts in flight before exiting");
    s.key("keep_alive", &ServeConfig::keep_alive,
          sim::duration_codec(Bounds<Duration>{Duration::zero(), std::chrono::hours(1), false, nullptr}),
          "how long a connection to an endpoint or to ServiceB stays open, unused, for the next call to the same "
          "scheme, host and port (at most 64 to one, 512 in all); `0s`: a new connection for every call");
    s.check(check_serve);
    return s;
  }();
  return schema;
}

const Schema<ServeFile>& file_schema() {
  static const Schema<ServeFile> schema = [] {
    Schema<ServeFile> s(sim::Style::block, "A `relaysim serve` configuration file.");
    s.key("system", &ServeFile::system, system_codec(), "`webhook` (the default): this file serves the webhook platform");
    s.key("serve", &ServeFile::config, sim::map_codec(serve_schema()), "the service itself");
    s.key("platform", &ServeFile::config,
          section_codec("mapping, as a scenario's `webhook.platform`", sim::webhook::platform_schema(), &ServeConfig::platform),
          "the platform's policies: the keys of a scenario's `webhook.platform` (docs/scenario-format.md)");
    s.check([](const Reader&, const Map&, ServeFile& f) {
      RELAYSIM_ASSERT(f.system == ServedSystem::webhook, "cli/live_commands.cpp reads a file by its system");
    });
    return s;
  }();
  return schema;
}

}  // namespace

ServeConfig parse_serve_config(std::string_view text, const std::string& file) {
  return parse_serve_file(file_schema(), text, file).config;
}

ServeConfig read_serve_config(const std::string& path) { return read_serve_file(file_schema(), path).config; }

std::vector<sim::DocTable> serve_config_reference() { return serve_reference(serve_schema()); }

}  // namespace relaysim::live::webhook
