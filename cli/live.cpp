#include "cli/live.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/system/system_error.hpp>

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "live/config.h"
#include "live/service.h"
#include "live/world.h"
#include "model/store/store_error.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/units.h"

namespace relaysim::cli {

namespace {

std::string_view durability_name(Durability d) {
  switch (d) {
    case Durability::full: return "synchronous=FULL";
    case Durability::normal: return "synchronous=NORMAL";
    case Durability::off: return "synchronous=OFF";
  }
  return "?";
}

}  // namespace

int serve_command(const ServeArgs& args) {
  live::ServeConfig config;
  try {
    config = live::read_serve_config(args.config);
  } catch (const sim::ScenarioError& e) {
    return fail_usage(std::string("invalid configuration: ") + e.what());
  }
  if (args.listen) config.listen = *args.listen;
  if (args.database) config.database = *args.database;
  if (config.platform.pods != 1) {
    std::cerr << "relaysim serve: one process is one pod (platform.pods: " << config.platform.pods
              << " is for the simulator); start more processes on the same database for more\n";
  }
  if (args.check) {
    std::cout << args.config << ": valid\n";
    return kExitPass;
  }
  boost::asio::io_context io;
  std::unique_ptr<live::Service> service;
  try {
    service = std::make_unique<live::Service>(io, config);
  } catch (const StoreError& e) {
    return fail_incomplete(std::string("cannot open the database: ") + e.what());
  } catch (const boost::system::system_error& e) {
    return fail_incomplete("cannot listen on " + config.listen + ": " + e.code().message());
  } catch (const std::invalid_argument& e) {
    return fail_usage(e.what());
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
  std::printf("relaysim serve: listening on http://%s:%u (pod %u, database %s, %s, ServiceB %s)\n",
              config.listen.substr(0, config.listen.rfind(':')).c_str(), static_cast<unsigned>(service->port()),
              static_cast<unsigned>(config.pod), config.database.c_str(), std::string(durability_name(config.durability)).c_str(),
              config.serviceb.c_str());
  std::fflush(stdout);
  try {
    io.run();
  } catch (const StoreError& e) {
    return fail_incomplete(std::string("the store failed: ") + e.what());
  }
  if (unfinished > 0) {
    std::cerr << "relaysim serve: stopped with " << unfinished
              << " attempts unfinished; their leases bring them back to another process\n";
  } else {
    std::cerr << "relaysim serve: stopped; nothing was left in flight\n";
  }
  return kExitPass;
}

int world_command(const WorldArgs& args) {
  sim::Scenario scenario;
  try {
    scenario = sim::load_scenario(args.scenario);
  } catch (const sim::ScenarioError& e) {
    return fail_usage(std::string("invalid scenario: ") + e.what());
  }
  live::WorldOptions options;
  options.listen = args.listen;
  options.receipts = args.receipts;
  options.signing_secret = args.signing_secret;
  if (args.hold) {
    Duration hold{};
    if (!sim::parse_duration(*args.hold, hold) || hold <= Duration::zero()) {
      return fail_usage("--hold: expected a duration such as 30s, got '" + *args.hold + "'");
    }
    options.hold = hold;
  }
  boost::asio::io_context io;
  std::unique_ptr<live::WorldServer> world;
  try {
    world = std::make_unique<live::WorldServer>(io, scenario, options);
  } catch (const boost::system::system_error& e) {
    return fail_incomplete("cannot listen on " + args.listen + ": " + e.code().message());
  } catch (const std::invalid_argument& e) {
    return fail_usage(e.what());
  }
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) io.stop();
  });
  const std::string host = args.listen.substr(0, args.listen.rfind(':'));
  std::printf("relaysim world: %s on http://%s:%u; ServiceB at http://%s:%u/serviceb; %u endpoints; cxids cx0..cx%u%s%s\n",
              scenario.name.c_str(), host.c_str(), static_cast<unsigned>(world->port()), host.c_str(),
              static_cast<unsigned>(world->port()), world->endpoints(), world->cxids() - 1,
              args.receipts.empty() ? "" : "; receipts to ", args.receipts.c_str());
  std::fflush(stdout);
  io.run();
  std::cerr << "relaysim world: stopped after " << world->receipts() << " receipts\n";
  return kExitPass;
}

}  // namespace relaysim::cli
