#include "cli/live_commands.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/system/system_error.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <vector>

#include "cli/commands.h"
#include "live/webhook/config.h"
#include "live/webhook/judge.h"
#include "live/clock.h"
#include "live/http_server.h"
#include "live/webhook/api.h"
#include "live/api_keys.h"
#include "live/webhook/load_driver.h"
#include "live/webhook/service.h"
#include "live/webhook/world.h"
#include "live/serve_file.h"
#include "live/outbox/config.h"
#include "live/outbox/event_log.h"
#include "live/outbox/judge.h"
#include "live/outbox/service.h"
#include "live/outbox/world.h"
#include "live/sms/config.h"
#include "live/sms/judge.h"
#include "live/sms/service.h"
#include "live/sms/world.h"
#include "sim/outbox/spec.h"
#include "sim/sms/spec.h"
#include "model/sms/sqlite_store.h"
#include "model/store/sqlite_db.h"
#include "model/store/store_error.h"
#include "sim/loader.h"
#include "sim/summary.h"
#include "sim/report/metric.h"
#include "sim/scenario/units.h"

namespace relaysim::live {

using cli::fail_incomplete;
using cli::fail_usage;
using cli::kExitPass;

namespace {

std::string_view durability_name(Durability d) {
  switch (d) {
    case Durability::full: return "synchronous=FULL";
    case Durability::normal: return "synchronous=NORMAL";
    case Durability::off: return "synchronous=OFF";
  }
  return "?";
}

// A serve file read by `read`, with the command line's overrides of what every system's file has
// (listen, database, pod); the exit code when it is refused.
template <class Config, class Read>
std::optional<int> read_serve_config(const ServeArgs& args, Config& config, Read read) {
  try {
    config = read(args.config);
  } catch (const sim::ScenarioError& e) {
    return fail_usage(std::string("invalid configuration: ") + e.what());
  }
  if (args.listen) {
    std::string problem;
    if (!parse_listen(*args.listen, problem)) return fail_usage("--listen: " + problem);
    config.listen = *args.listen;
  }
  if (args.database) config.database = *args.database;
  if (args.pod) config.pod = *args.pod;
  return std::nullopt;
}

// The webhook platform's configuration file with the command line's overrides; the exit code
// when it is refused.
std::optional<int> read_config(const ServeArgs& args, webhook::ServeConfig& config) {
  if (const auto refused = read_serve_config(args, config, webhook::read_serve_config)) return refused;
  config.events = args.events;
  if (config.platform.pods != 1) {
    std::cerr << "relaysim serve: one process is one pod (platform.pods: " << config.platform.pods
              << " is for the simulator); start more processes on the same database for more\n";
  }
  return std::nullopt;
}

// The SMS gateway's configuration file with the command line's overrides; the exit code when it
// is refused.
std::optional<int> read_config(const ServeArgs& args, sms::SmsServeConfig& config) {
  if (const auto refused = read_serve_config(args, config, sms::read_serve_config)) return refused;
  config.events = args.events;
  return std::nullopt;
}

// The table every database a serve of `system` wrote holds.
std::string_view own_table(ServedSystem system) { return system == ServedSystem::sms ? "businesses" : "requests"; }

// serve writes only a database that is new, empty or serve's own (for the same system): never a
// simulated run's (which `relaysim run --sqlite-path` labels with its relaysim_run table) nor
// anyone else's. The exit code when `database` is another's.
std::optional<int> refuse_foreign_database(const std::string& database, ServedSystem system = ServedSystem::webhook) {
  if (database == ":memory:") return std::nullopt;
  const DbInspection db = inspect_database(database);
  if (db.is_directory) return fail_usage("--database " + database + " is a directory; give the path of a database file");
  if (db.exists && !db.is_sqlite) {
    return fail_usage("--database " + database + " is not an SQLite database (" + db.error + "); serve will not touch it");
  }
  if (db.has_table("relaysim_run")) {
    return fail_usage("--database " + database +
                      " holds a simulated run (relaysim run --sqlite-path); serve keeps a database of its own: choose another path");
  }
  if (!db.tables.empty() && !db.has_table(own_table(system))) {
    std::string names;
    for (const std::string& t : db.tables) names += (names.empty() ? "" : ", ") + t;
    return fail_usage("--database " + database + " is not a database relaysim serve wrote for the " +
                      (system == ServedSystem::sms ? "SMS gateway" : "webhook platform") + " (it holds the tables " +
                      names + "); serve will not touch it: choose another path");
  }
  return std::nullopt;
}

// Serves `config` until SIGINT or SIGTERM, then drains what is in flight. `announce` prints the
// line that says where it listens.
template <class Service, class Config, class Announce>
int run_service(const Config& config, std::string_view admin_calls, Announce announce) {
  boost::asio::io_context io;
  std::unique_ptr<Service> service;
  try {
    service = std::make_unique<Service>(io, config);
  } catch (const StoreError& e) {
    return fail_incomplete(std::string("cannot open the database: ") + e.what());
  } catch (const boost::system::system_error& e) {
    return fail_incomplete("cannot listen on " + config.listen + ": " + e.code().message());
  } catch (const std::invalid_argument& e) {
    return fail_usage(e.what());
  } catch (const std::runtime_error& e) {  // the clock (live/clock.h)
    return fail_incomplete(e.what());
  }
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  std::uint32_t unfinished = 0;
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    std::cerr << "relaysim serve: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT")
              << ": draining (no new requests; finishing the attempts in flight)\n";
    service->drain([&](std::uint32_t left) {
      unfinished = left;
      io.stop();
    });
  });
  service->start();
  if constexpr (requires { service->has_admin_key(); }) {
    if (!service->has_admin_key()) {
      std::cerr << "relaysim serve: the database holds no admin API key, so every call that takes one (" << admin_calls
                << ") is refused: make one with `relaysim keys CONFIG --admin` (docs/live.md)\n";
    }
  }
  announce(url_host(listen_endpoint(config.listen, "listen")) + ":" + std::to_string(service->port()));
  std::fflush(stdout);
  try {
    io.run();
  } catch (const StoreError& e) {
    return fail_incomplete(std::string("the store failed: ") + e.what());
  }
  service->stopped();
  if (unfinished > 0) {
    std::cerr << "relaysim serve: stopped with " << unfinished
              << " unfinished; their leases bring them back to another process\n";
  } else {
    std::cerr << "relaysim serve: stopped; nothing was left in flight\n";
  }
  return kExitPass;
}

// `relaysim serve` for the outbox relay: one pod of it, on the PostgreSQL databases, etcd and Redis
// its file names.
int serve_outbox(const ServeArgs& args) {
  outbox::OutboxServeConfig config;
  try {
    config = outbox::read_serve_config(args.config);
  } catch (const sim::ScenarioError& e) {
    return fail_usage(std::string("invalid configuration: ") + e.what());
  }
  if (args.database) return fail_usage("--database: the outbox relay's databases are its serve.shards, one per shard");
  config.events = args.events;
  if (args.crash_after_commit && args.events.empty()) {
    return fail_usage("--crash-after-commit needs --events: it stops the process before a change's line is logged");
  }
  config.crash_after_commit = args.crash_after_commit;
  if (args.listen) {
    std::string problem;
    if (!parse_listen(*args.listen, problem)) return fail_usage("--listen: " + problem);
    config.listen = *args.listen;
  }
  if (args.pod) {
    if (*args.pod > config.platform.pods) {
      return fail_usage("--pod " + std::to_string(*args.pod) + ": platform.pods is " + std::to_string(config.platform.pods) +
                        ", so pods are numbered 1 to " + std::to_string(config.platform.pods));
    }
    config.pod = *args.pod;
  }
  if (args.check) {
    std::cout << args.config << ": valid (the outbox relay: " << config.shards.size() << " shards on PostgreSQL, leases in etcd at "
              << config.etcd << ", the log in Redis at " << config.redis << ")\n";
    return kExitPass;
  }
  return run_service<outbox::Service>(config, "", [&config](const std::string& at) {
    std::printf("relaysim serve: the outbox relay listening on http://%s (pod %u of %u, %zu shards on PostgreSQL, etcd %s, "
                "the log in Redis %s, downstream %s)\n",
                at.c_str(), static_cast<unsigned>(config.pod), static_cast<unsigned>(config.platform.pods),
                config.shards.size(), config.etcd.c_str(), config.redis.c_str(), config.downstream.c_str());
  });
}

}  // namespace

int serve_command(const ServeArgs& args) {
  if (args.reference) {
    std::cout << "<!-- Generated by `relaysim serve --reference`; a test keeps it equal to the program. -->\n\n"
              << sim::render_markdown(webhook::serve_config_reference())
              << "\n#### The SMS gateway's `serve:` (a file with `system: sms`)\n\n"
              << sim::render_markdown(sms::serve_config_reference())
              << "\n#### The outbox relay's `serve:` (a file with `system: outbox`)\n\n"
              << sim::render_markdown(outbox::serve_config_reference())
              << outbox::events_reference();
    return kExitPass;
  }
  if (args.config.empty()) return fail_usage("serve needs a configuration file: relaysim serve CONFIG (see docs/live.md)");
  ServedSystem system{};
  try {
    system = served_system(args.config);
  } catch (const sim::ScenarioError& e) {
    return fail_usage(std::string("invalid configuration: ") + e.what());
  }
  if (system == ServedSystem::outbox) return serve_outbox(args);
  if (args.crash_after_commit) return fail_usage("--crash-after-commit: only the outbox relay (system: outbox) has it");
  if (system == ServedSystem::sms) {
    sms::SmsServeConfig config;
    if (const auto refused = read_config(args, config)) return *refused;
    if (const auto refused = refuse_foreign_database(config.database, system)) return *refused;
    if (args.check) {
      std::cout << args.config << ": valid (the SMS gateway)\n";
      return kExitPass;
    }
    return run_service<sms::Service>(config, "the back office", [&config](const std::string& at) {
      std::printf("relaysim serve: the SMS gateway listening on http://%s (pod %u, database %s, %s, %zu providers, %s)\n",
                  at.c_str(), static_cast<unsigned>(config.pod), config.database.c_str(),
                  std::string(durability_name(config.durability)).c_str(), config.providers.size(),
                  config.redis.empty() ? "no Redis" : ("Redis " + config.redis).c_str());
    });
  }
  webhook::ServeConfig config;
  if (const auto refused = read_config(args, config)) return *refused;
  if (const auto refused = refuse_foreign_database(config.database)) return *refused;
  if (args.check) {
    std::cout << args.config << ": valid\n";
    return kExitPass;
  }
  return run_service<webhook::Service>(config, "the keys, /metrics", [&config](const std::string& at) {
    std::printf("relaysim serve: listening on http://%s (pod %u, database %s, %s, ServiceB %s)\n", at.c_str(),
                static_cast<unsigned>(config.pod), config.database.c_str(),
                std::string(durability_name(config.durability)).c_str(), config.serviceb.c_str());
  });
}

int keys_command(const KeysArgs& args) {
  ServeArgs serve;
  serve.config = args.config;
  serve.database = args.database;
  ServedSystem system{};
  try {
    system = served_system(args.config);
  } catch (const sim::ScenarioError& e) {
    return fail_usage(std::string("invalid configuration: ") + e.what());
  }
  // Only the database's path and durability matter here.
  struct {
    std::string database;
    Durability durability = Durability::full;
  } config;
  if (system == ServedSystem::outbox) return fail_usage("the outbox relay's business API takes no API keys");
  if (system == ServedSystem::sms) {
    sms::SmsServeConfig sms_config;
    if (const auto refused = read_config(serve, sms_config)) return *refused;
    config = {sms_config.database, sms_config.durability};
    if (args.tenant) {
      return fail_usage("--tenant: the SMS gateway's businesses send with the tokens its back office issues, not with "
                        "API keys (docs/live.md)");
    }
  } else {
    webhook::ServeConfig webhook_config;
    if (const auto refused = read_config(serve, webhook_config)) return *refused;
    config = {webhook_config.database, webhook_config.durability};
  }
  if (const auto refused = refuse_foreign_database(config.database, system)) return *refused;
  if (config.database.empty() || config.database == ":memory:") {
    return fail_usage("--database '" + config.database + "' holds no keys a service could read: give a file");
  }
  if (args.tenant) {
    if (const std::string problem = tenant_problem(*args.tenant); !problem.empty()) {
      return fail_usage("--tenant: " + problem);
    }
  }
  // Only a new key makes a database: a list or a revocation of a path that holds none is a typo.
  if (!args.admin && !args.tenant && !inspect_database(config.database).exists) {
    return fail_usage("no database at " + config.database + " (the path is the configuration's serve.database, or "
                      "--database, from the current directory): nothing to list or revoke");
  }
  try {
    // The whole store, not only the keys' table: serve then finds a database of its own.
    std::unique_ptr<webhook::model::SqliteStore> webhook_store;
    std::unique_ptr<relaysim::sms::SqliteStore> sms_store;
    if (system == ServedSystem::sms) {
      sms_store = std::make_unique<relaysim::sms::SqliteStore>(config.database, config.durability);
    } else {
      webhook_store = std::make_unique<webhook::model::SqliteStore>(config.database, config.durability);
    }
    ApiKeys keys(sms_store ? sms_store->db() : webhook_store->db());
    const Time now = LiveClock().now();
    if (args.admin || args.tenant) {
      const ApiKeys::Created k = keys.create(args.admin ? std::nullopt : args.tenant, now);
      std::cout << k.key << "\n";
      std::cerr << "relaysim keys: key " << k.id << (args.admin ? ", the admin's" : ", tenant " + *args.tenant + "'s")
                << ", in " << config.database << ". It is shown this once: the database keeps only its hash\n";
      return kExitPass;
    }
    if (args.revoke) {
      if (keys.revoke(*args.revoke, now, /*keep_an_admin=*/false) != ApiKeys::Revoked::revoked) {
        return fail_usage("--revoke " + std::to_string(*args.revoke) + ": no such key, or it is revoked already");
      }
      std::cerr << "relaysim keys: key " << *args.revoke << " revoked\n";
      return kExitPass;
    }
    const std::vector<KeyInfo> all = keys.list();
    std::cout << "id\ttenant\tcreated_at\trevoked_at\n";
    for (const KeyInfo& k : all) {
      std::cout << k.id << '\t' << (k.tenant ? *k.tenant : "(admin)") << '\t' << format_utc(k.created_at) << '\t'
                << (k.revoked_at ? format_utc(*k.revoked_at) : "-") << '\n';
    }
    return kExitPass;
  } catch (const StoreError& e) {
    return fail_incomplete(std::string("the database failed: ") + e.what());
  } catch (const std::runtime_error& e) {
    return fail_incomplete(e.what());
  }
}

namespace {

// --hold into `hold`; the exit code when it is not a duration.
std::optional<int> read_hold(const WorldArgs& args, Duration& hold) {
  if (!args.hold) return std::nullopt;
  if (!sim::parse_duration(*args.hold, hold) || hold <= Duration::zero()) {
    return fail_usage("--hold: expected a duration such as 30s, got '" + *args.hold + "'");
  }
  return std::nullopt;
}

// A world of `scenario` on `io`, listening; the exit code when it cannot be made.
template <class World, class Options>
std::optional<int> make_world(boost::asio::io_context& io, const sim::Scenario& scenario, const Options& options,
                              std::unique_ptr<World>& world) {
  try {
    world = std::make_unique<World>(io, scenario, options);
  } catch (const boost::system::system_error& e) {
    return fail_incomplete("cannot listen on " + options.listen + ": " + e.code().message());
  } catch (const std::invalid_argument& e) {
    return fail_usage(e.what());
  } catch (const StoreError& e) {  // an SMS world's recipient directory, an outbox world's effects
    return fail_incomplete(std::string("cannot write the world's database (an SMS world's serve.directory, an outbox "
                                       "world's --effects): ") + e.what());
  } catch (const std::runtime_error& e) {  // the clock (live/clock.h)
    return fail_incomplete(e.what());
  }
  return std::nullopt;
}

// A world's --serve file into `out`, read by `read`; the exit code when it is not `want`'s (`whose`
// says whose it must be) or is not valid.
template <class Config, class Read>
std::optional<int> read_world_serve(const std::string& path, ServedSystem want, std::string_view whose, Read read,
                                    Config& out) {
  try {
    if (served_system(path) != want) return fail_usage("--serve " + path + " is not " + std::string(whose));
    out = read(path);
  } catch (const sim::ScenarioError& e) {
    return fail_usage(std::string("--serve: invalid configuration: ") + e.what());
  }
  return std::nullopt;
}

// `relaysim world` for an SMS scenario: its providers, until SIGINT or SIGTERM.
int sms_world(const WorldArgs& args, const sim::Scenario& scenario) {
  if (args.serve.empty()) {
    return fail_usage("an SMS world posts its providers' receipts to the gateway: give its serve configuration with "
                      "--serve CONFIG");
  }
  if (!args.drive.empty() || !args.calls.empty() || !args.signing_secret.empty() || !args.effects.empty()) {
    return fail_usage("--drive, --calls, --signing-secret and --effects are a webhook or outbox world's; an SMS world serves "
                      "its providers only");
  }
  sms::SmsServeConfig gateway;
  if (const auto refused = read_world_serve(args.serve, ServedSystem::sms, "an SMS gateway's (system: sms)",
                                            sms::read_serve_config, gateway)) {
    return *refused;
  }
  sms::SmsWorldOptions options;
  options.listen = args.listen.value_or(options.listen);
  options.receipts = args.receipts;
  if (!args.gateway.empty()) {
    std::string problem;
    const std::optional<Url> url = parse_url(args.gateway, problem);
    if (!url || url->scheme != "http" || url->target != "/") {
      return fail_usage("--gateway: expected the gateway's base URL such as http://127.0.0.1:8090, got '" + args.gateway +
                        "'" + (problem.empty() ? "" : ": " + problem));
    }
    options.gateway = args.gateway.back() == '/' ? args.gateway.substr(0, args.gateway.size() - 1) : args.gateway;
  } else {
    const boost::asio::ip::tcp::endpoint at = listen_endpoint(gateway.listen, "serve.listen");
    if (at.port() == 0) {
      return fail_usage("--serve " + args.serve + " listens on any free port (serve.listen " + gateway.listen +
                        "): say where the gateway is with --gateway http://HOST:PORT");
    }
    options.gateway = "http://" + url_host(at) + ":" + std::to_string(at.port());
  }
  options.providers = gateway.providers;
  options.directory = gateway.directory;
  options.platform = gateway.platform;
  options.business = gateway.business;
  if (const auto refused = read_hold(args, options.hold)) return *refused;
  boost::asio::io_context io;
  std::unique_ptr<sms::SmsWorldServer> world;
  if (const auto refused = make_world(io, scenario, options, world)) return *refused;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) io.stop();
  });
  const std::string host = url_host(listen_endpoint(options.listen, "--listen"));
  std::printf("relaysim world: %s on http://%s:%u; %zu providers at /providers/{name}/submit; receipts to %s%s%s%s%s\n",
              scenario.name.c_str(), host.c_str(), static_cast<unsigned>(world->port()), world->providers(),
              options.gateway.c_str(), args.receipts.empty() ? "" : "; log in ", args.receipts.c_str(),
              options.directory.empty() ? "" : "; recipient directory in ", options.directory.c_str());
  std::fflush(stdout);
  io.run();
  std::cerr << "relaysim world: stopped after " << world->submits() << " submits\n";
  return kExitPass;
}

// `relaysim world` for an outbox scenario: its downstream, until SIGINT or SIGTERM.
int outbox_world(const WorldArgs& args, const sim::Scenario& scenario) {
  if (args.serve.empty()) {
    return fail_usage("an outbox world reads the relay's message types and handle_timeout from its serve configuration: "
                      "give it with --serve CONFIG");
  }
  if (!args.drive.empty() || !args.calls.empty() || !args.signing_secret.empty() || !args.gateway.empty()) {
    return fail_usage("--drive, --calls, --signing-secret and --gateway are a webhook or SMS world's; an outbox world "
                      "serves its downstream only");
  }
  outbox::OutboxServeConfig relay;
  if (const auto refused = read_world_serve(args.serve, ServedSystem::outbox, "an outbox relay's (system: outbox)",
                                            outbox::read_serve_config, relay)) {
    return *refused;
  }
  outbox::OutboxWorldOptions options;
  options.listen = args.listen.value_or(options.listen);
  options.receipts = args.receipts;
  if (!args.effects.empty()) options.effects = args.effects;
  options.platform = relay.platform;
  if (const auto refused = read_hold(args, options.hold)) return *refused;
  boost::asio::io_context io;
  std::unique_ptr<outbox::OutboxWorldServer> world;
  if (const auto refused = make_world(io, scenario, options, world)) return *refused;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) io.stop();
  });
  const std::string host = url_host(listen_endpoint(options.listen, "--listen"));
  std::printf("relaysim world: %s on http://%s:%u; the downstream at /downstream; effects in %s%s%s\n",
              scenario.name.c_str(), host.c_str(), static_cast<unsigned>(world->port()), options.effects.c_str(),
              args.receipts.empty() ? "" : "; log in ", args.receipts.c_str());
  std::fflush(stdout);
  io.run();
  std::cerr << "relaysim world: stopped after " << world->handlings() << " handlings, " << world->effects()
            << " effects applied\n";
  return kExitPass;
}

}  // namespace

int world_command(const WorldArgs& args) {
  sim::Scenario scenario;
  try {
    scenario = sim::load_scenario(args.scenario);
  } catch (const sim::ScenarioError& e) {
    return fail_usage(std::string("invalid scenario: ") + e.what());
  }
  if (dynamic_cast<const sim::sms::SmsSpec*>(&scenario.spec()) != nullptr) return sms_world(args, scenario);
  if (dynamic_cast<const sim::outbox::OutboxSpec*>(&scenario.spec()) != nullptr) return outbox_world(args, scenario);
  if (!args.effects.empty()) return fail_usage("--effects is an outbox world's: the downstream's database");
  if (!args.serve.empty() || !args.gateway.empty()) {
    return fail_usage("--serve and --gateway name the SMS gateway a world's receipts go to: a webhook world takes neither");
  }
  webhook::WorldOptions options;
  options.listen = args.listen.value_or(options.listen);
  options.receipts = args.receipts;
  options.signing_secret = args.signing_secret;
  if (const auto refused = read_hold(args, options.hold)) return *refused;
  boost::asio::io_context io;
  std::unique_ptr<webhook::WorldServer> world;
  if (const auto refused = make_world(io, scenario, options, world)) return *refused;
  std::unique_ptr<webhook::LoadDriver> driver;
  if (!args.drive.empty()) {
    const char* key = std::getenv("RELAYSIM_API_KEY");
    if (key == nullptr || *key == '\0') return fail_usage("--drive: set RELAYSIM_API_KEY to an admin key of the serve it calls");
    if (args.calls.empty()) return fail_usage("--drive: say where the calls go with --calls FILE");
    for (const std::string& target : args.drive) {
      std::string problem;
      const std::optional<Url> url = parse_url(target, problem);
      if (!url || url->scheme != "http" || url->target != "/") {
        return fail_usage("--drive: expected serve's base URL such as http://127.0.0.1:8080, got '" + target + "'" +
                          (problem.empty() ? "" : ": " + problem));
      }
    }
    try {
      driver = std::make_unique<webhook::LoadDriver>(io, scenario, args.drive, key, args.calls, world->started(),
                                                     [](std::uint64_t calls) {
                                                       std::printf("relaysim world: the load is done: %llu calls answered\n",
                                                                   static_cast<unsigned long long>(calls));
                                                       std::fflush(stdout);
                                                     });
    } catch (const std::invalid_argument& e) {
      return fail_usage(e.what());
    }
  }
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) io.stop();
  });
  const std::string host = url_host(listen_endpoint(options.listen, "--listen"));
  std::printf("relaysim world: %s on http://%s:%u; ServiceB at http://%s:%u/serviceb; %u endpoints; cxids cx0..cx%u%s%s\n",
              scenario.name.c_str(), host.c_str(), static_cast<unsigned>(world->port()), host.c_str(),
              static_cast<unsigned>(world->port()), world->endpoints(), world->cxids() - 1,
              args.receipts.empty() ? "" : "; receipts to ", args.receipts.c_str());
  std::fflush(stdout);
  if (driver) driver->start();
  io.run();
  std::cerr << "relaysim world: stopped after " << world->receipts() << " receipts\n";
  return kExitPass;
}

namespace {

// Runs `judge`, turning what it refuses into the exit code of a usage error.
template <class Judge>
std::optional<int> refused_by(Judge&& judge) {
  try {
    judge();
  } catch (const sim::ScenarioError& e) {
    return fail_usage(std::string("invalid input: ") + e.what());
  } catch (const std::invalid_argument& e) {
    return fail_usage(e.what());
  } catch (const StoreError& e) {
    return fail_usage(std::string("cannot read the database: ") + e.what());
  }
  return std::nullopt;
}

// Each invariant's line and the examples of what broke it; `not_judged`: invariants no record of
// the run lets the judge check, by id, with why.
void print_ledger(const sim::Ledger& ledger, const std::vector<std::pair<std::string, std::string>>& not_judged = {}) {
  const auto invariants = ledger.invariants();
  for (std::size_t i = 0; i < invariants.size(); ++i) {
    const auto unjudged = std::find_if(not_judged.begin(), not_judged.end(),
                                       [&](const auto& n) { return n.first == invariants[i].id; });
    const std::string verdict = ledger.count(i) > 0        ? std::to_string(ledger.count(i)) + " broken"
                                : unjudged != not_judged.end() ? "not judged (" + unjudged->second + ")"
                                                               : "holds";
    std::printf("  %-12s %-8s %s\n", std::string(invariants[i].id).c_str(), verdict.c_str(),
                std::string(invariants[i].title).c_str());
  }
  for (const sim::Violation& v : ledger.examples()) std::printf("  %s\n", ledger.describe(v).c_str());
}

// The verdict line and the exit code; `json` (when named) gets the verdict and `figures`.
int verdict(const sim::Ledger& ledger, const std::string& json, nlohmann::json figures) {
  if (!json.empty()) {
    figures["verdict"] = ledger.total() == 0 ? "PASS" : "FAIL";
    figures["violations"] = ledger.total();
    std::ofstream file(json);
    file << sim::json_text(figures) << "\n";
    if (!file) return fail_incomplete("--json: cannot write " + json);
  }
  if (ledger.total() > 0) {
    std::printf("judge: FAIL: %llu violations\n", static_cast<unsigned long long>(ledger.total()));
    return cli::kExitFail;
  }
  std::printf("judge: every invariant holds\n");
  return kExitPass;
}

int judge_sms(const JudgeArgs& args) {
  sms::Judgement j;
  if (const auto refused = refused_by([&] {
        j = sms::judge({args.scenario, args.config, args.events, args.receipts, args.calls, args.database});
      })) {
    return *refused;
  }
  const auto n = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("judge: %llu client calls answered%s, %llu messages accepted, %llu submits started, %llu reached a provider "
              "(%llu SMS sent), %llu receipts applied, %llu changes of sync-to-async mode, %llu crashes (%llu store "
              "changes they left unlogged)\n",
              n(j.calls), args.calls.empty() ? " (no --calls: what the clients were answered is not judged)" : "",
              n(j.accepted), n(j.submits), n(j.provider_submits), n(j.sent), n(j.receipts), n(j.mode_changes), n(j.crashes),
              n(j.recovered));
  std::string duplicates;
  for (const auto& [cause, count] : j.duplicates) duplicates += (duplicates.empty() ? "" : ", ") + std::to_string(count) + " " + cause;
  std::printf("judge: second SMS of one message: %s; limit decisions on a process's own share replayed: %llu (%llu made "
              "by Redis, judged by the limiter's twin check, not here)\n",
              duplicates.empty() ? "none" : duplicates.c_str(), n(j.limit_checks), n(j.limit_by_store));
  print_ledger(j.ledger, j.not_judged);
  nlohmann::json not_judged = nlohmann::json::array();
  for (const auto& [id, why] : j.not_judged) not_judged.push_back(id);
  return verdict(j.ledger, args.json,
                 nlohmann::json{{"accepted", j.accepted}, {"submits", j.submits}, {"sent", j.sent}, {"crashes", j.crashes},
                                {"not_judged", not_judged}});
}

int judge_outbox(const JudgeArgs& args) {
  if (!args.calls.empty()) return fail_usage("--calls is not read for the outbox relay's run: its logs tell of each operation");
  if (!args.database.empty()) {
    return fail_usage("--database is not read for the outbox relay's run: its shards are the serve file's PostgreSQL "
                      "databases (serve.shards), read as they are");
  }
  outbox::Judgement j;
  if (const auto refused = refused_by([&] { j = outbox::judge({args.scenario, args.config, args.events, args.receipts}); })) {
    return *refused;
  }
  const auto n = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("judge: %u processes; %llu business operations committed (%llu messages), %llu rolled back; %llu leader "
              "writes took effect, %llu kept out by the fence; %llu records written to the log; %llu effects applied\n",
              j.processes, n(j.committed), n(j.messages), n(j.rolled_back), n(j.leader_writes), n(j.fenced_out),
              n(j.appended), n(j.effects));
  std::string duplicates;
  for (const auto& [cause, count] : j.duplicates) duplicates += (duplicates.empty() ? "" : ", ") + std::to_string(count) + " " + cause;
  std::printf("judge: second records of one attempt: %s; %llu records replayed before lines logged earlier (a change "
              "committed before its line was written); %llu crashes (%llu changes they committed and never logged)\n",
              duplicates.empty() ? "none" : duplicates.c_str(), n(j.pulled), n(j.crashes), n(j.recovered));
  print_ledger(j.ledger);
  nlohmann::json by_cause = nlohmann::json::object();
  for (const auto& [cause, count] : j.duplicates) by_cause[cause] = count;
  return verdict(j.ledger, args.json,
                 nlohmann::json{{"committed", j.committed}, {"messages", j.messages}, {"rolled_back", j.rolled_back},
                                {"effects", j.effects}, {"fenced_out", j.fenced_out}, {"duplicates", by_cause},
                                {"crashes", j.crashes}, {"recovered", j.recovered}});
}

}  // namespace

int judge_command(const JudgeArgs& args) {
  ServedSystem system{};
  if (const auto refused = refused_by([&] { system = served_system(args.config); })) return *refused;
  if (system == ServedSystem::outbox) return judge_outbox(args);
  if (args.database.empty()) return fail_usage("--database is required: the database the serve processes shared");
  if (system == ServedSystem::sms) return judge_sms(args);
  if (args.calls.empty()) return fail_usage("--calls is required for the webhook platform's run (docs/live.md)");
  webhook::Judgement j;
  if (const auto refused = refused_by([&] {
        j = webhook::judge({args.scenario, args.config, args.events, args.receipts, args.calls, args.database});
      })) {
    return *refused;
  }
  std::printf("judge: %llu requests acknowledged, %llu client calls, %llu attempts, %llu receipts, %llu ServiceB lookups, "
              "%llu breaker changes, %llu crashes (%llu store changes they left unlogged)\n",
              static_cast<unsigned long long>(j.acknowledged), static_cast<unsigned long long>(j.calls),
              static_cast<unsigned long long>(j.attempts), static_cast<unsigned long long>(j.receipts),
              static_cast<unsigned long long>(j.lookups), static_cast<unsigned long long>(j.breaker_changes),
              static_cast<unsigned long long>(j.crashes), static_cast<unsigned long long>(j.recovered));
  std::string duplicates;
  for (const auto& [cause, n] : j.duplicates) duplicates += (duplicates.empty() ? "" : ", ") + std::to_string(n) + " " + cause;
  std::printf("judge: duplicate deliveries: %s; retries that honoured a Retry-After: %llu; terminal by %s\n",
              duplicates.empty() ? "none" : duplicates.c_str(), static_cast<unsigned long long>(j.retry_after_honoured),
              j.terminal_bound.c_str());
  print_ledger(j.ledger);
  // The metrics as `relaysim run --json` names them, so a live run and a simulated one compare
  // figure by figure (`./relaysim twin`).
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& m : sim::webhook::kMetrics) {
    if (sim::is_family(m.info.name)) continue;
    const double v = m.value(j.figures, 0);
    metrics[std::string(m.info.name)] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
  }
  // Each drain as `relaysim run --json` writes it (backlog.drains).
  nlohmann::json drains = nlohmann::json::array();
  for (const sim::Drain& d : j.drains) drains.push_back(sim::drain_json(d, {}));
  return verdict(j.ledger, args.json,
                 nlohmann::json{{"drains", drains}, {"acknowledged", j.acknowledged}, {"crashes", j.crashes}, {"metrics", metrics}});
}

}  // namespace relaysim::live
