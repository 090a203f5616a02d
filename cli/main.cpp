// relaysim: the command-line front end.
//
//   relaysim run FILE [--seed N] [--store memory|sqlite] [--json PATH]
//   relaysim validate FILE...
//   relaysim metrics
//   relaysim mmc --lambda L --mu M --servers C [--customers N] [--seed S] [--json]
//
// Exit status: 0 when every invariant and expectation holds, 1 when any fails, 2 for an invalid
// scenario or bad usage. This file is the only place the wall clock is read: for the progress line
// and the events-per-second figures, never for the simulation itself.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "model/store/store.h"
#include "sim/models/mmc.h"
#include "sim/report/summary.h"
#include "sim/run.h"
#include "sim/scenario/expect.h"
#include "sim/scenario/loader.h"
#ifdef RELAYSIM_MUTANTS_CLI
#include "cli/mutants.h"
#include "model/core/mutants.h"
#endif

namespace {

using namespace relaysim;
using namespace relaysim::sim;

constexpr int kExitPass = 0;
constexpr int kExitFail = 1;
constexpr int kExitInvalid = 2;

int run_command(const std::string& file, std::optional<std::uint64_t> seed, const std::string& store,
                const std::string& json_path, const std::string& sqlite_path, bool quiet) {
  Scenario scenario;
  try {
    scenario = load_scenario(file);
  } catch (const ScenarioError& e) {
    std::cerr << "relaysim: invalid scenario: " << e.what() << "\n";
    return kExitInvalid;
  }
  RunOptions options;
  options.seed = seed;
  if (store == "memory") options.store = StoreKind::memory;
  if (store == "sqlite") options.store = StoreKind::sqlite;
  options.sqlite_path = sqlite_path;
  const auto started = std::chrono::steady_clock::now();
  const bool tty = !quiet && isatty(STDERR_FILENO) != 0;
  const Duration total = scenario.duration;
  if (tty) {
    options.progress = [started, total](Time now, std::uint64_t events) {
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const double done = std::min(1.0, to_seconds(now) / std::max(1e-9, to_seconds(total)));
      const int bar = static_cast<int>(done * 30);
      std::fprintf(stderr, "\r  [%-30.*s] %3.0f%%  virtual %s  wall %.1fs  %.3g events", bar,
                   "##############################", done * 100, format_time(now).c_str(), wall,
                   static_cast<double>(events));
      std::fflush(stderr);
    };
  }
  RunResult result;
  try {
    result = run_scenario(scenario, std::move(options));
  } catch (const webhook::StoreError& e) {
    if (tty) std::fprintf(stderr, "\n");
    std::cerr << "relaysim: store failure: " << e.what() << "\n";
    return kExitInvalid;
  }
  if (tty) std::fprintf(stderr, "\r%*s\r", 110, "");
  WallStats wall;
  wall.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!quiet) print_summary(std::cout, result, wall);
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << to_json(result, wall).dump(2) << "\n";
    if (!out) {
      std::cerr << "relaysim: cannot write " << json_path << "\n";
      return kExitInvalid;
    }
  }
  return result.pass() ? kExitPass : kExitFail;
}

int validate_command(const std::vector<std::string>& files) {
  int status = kExitPass;
  for (const auto& f : files) {
    try {
      const Scenario s = load_scenario(f);
      std::cout << f << ": ok (" << s.name << ")\n";
    } catch (const ScenarioError& e) {
      std::cerr << "relaysim: invalid scenario: " << e.what() << "\n";
      status = kExitInvalid;
    }
  }
  return status;
}

int mmc_command(const MmcParams& p, bool json) {
  if (p.lambda >= p.mu * p.servers) {
    std::cerr << "relaysim mmc: lambda must be below servers * mu (" << p.mu * p.servers
              << "), or the queue grows without bound and has no steady-state wait\n";
    return kExitInvalid;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const MmcResult r = run_mmc(p);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double erlang = erlang_c_wait(p.lambda, p.mu, p.servers);
  const double per_s = static_cast<double>(r.customers) / wall;
  if (json) {
    const nlohmann::json j = {{"lambda", p.lambda},       {"mu", p.mu},
                              {"servers", p.servers},     {"customers", r.customers},
                              {"seed", p.seed},           {"events", r.events},
                              {"wall_seconds", wall},     {"customers_per_second", per_s},
                              {"mean_wait_s", r.mean_wait_s}, {"erlang_c_wait_s", erlang}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("M/M/%u  lambda %g/s  mu %g/s  %llu customers (seed %llu)\n", p.servers, p.lambda, p.mu,
                static_cast<unsigned long long>(r.customers), static_cast<unsigned long long>(p.seed));
    std::printf("  %.3f s wall, %.3g customers/s, %.3g events/s\n", wall, per_s,
                static_cast<double>(r.events) / wall);
    std::printf("  mean wait in queue %.6f s   (Erlang C: %.6f s)\n", r.mean_wait_s, erlang);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"relaysim: a deterministic simulator and reference implementation of reliable outbound delivery",
               "relaysim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "relaysim 0.1.0");

  auto* run = app.add_subcommand("run", "Run a scenario file and judge it against the invariants and its expect: block");
  std::string file, store, json_path, sqlite_path = ":memory:";
  std::optional<std::uint64_t> seed;
  bool quiet = false;
  run->add_option("FILE", file, "Scenario file (YAML); see docs/scenario-format.md")->required();
  run->add_option("--seed", seed, "Root seed, overriding the scenario's");
  run->add_option("--store", store, "Store to run on, overriding the scenario's")->check(CLI::IsMember({"memory", "sqlite"}));
  run->add_option("--sqlite-path", sqlite_path, "Database file for --store sqlite (default: in memory)");
  run->add_option("--json", json_path, "Also write the result as JSON to this path");
  run->add_flag("-q,--quiet", quiet, "Print nothing; the exit status tells the verdict");
#ifdef RELAYSIM_MUTANTS_CLI
  std::string mutant_name;
  run->add_option("--mutant", mutant_name, "Plant this bug for the run (see `mutants --list`)");
  auto* mutants = app.add_subcommand("mutants", "Run the property suite against every planted bug; exit 0 if all are caught");
  relaysim::cli::MutantsOptions mutants_options;
  bool list_mutants = false;
  mutants->add_option("--only", mutants_options.only, "Run one mutant");
  mutants->add_option("--cases", mutants_options.cases, "RapidCheck cases per property (a quarter on SQLite)")->check(CLI::PositiveNumber);
  mutants->add_option("--seed", mutants_options.seed, "RapidCheck seed");
  mutants->add_option("--report", mutants_options.report, "Where to write the Markdown table");
  mutants->add_option("--scenarios", mutants_options.scenarios_dir, "Where to write shrunk scenarios");
  mutants->add_flag("--list", list_mutants, "List the mutants and exit");
#endif

  auto* validate = app.add_subcommand("validate", "Check scenario files without running them");
  std::vector<std::string> files;
  validate->add_option("FILES", files, "Scenario files")->required();

  auto* metrics = app.add_subcommand("metrics", "List the metrics an expect: block may name");

  auto* mmc = app.add_subcommand("mmc", "Run the M/M/c queue on the simulation kernel; print its speed and mean wait "
                                        "next to Erlang C (the SimPy comparison in bench/ calls this)");
  MmcParams mmc_params;
  bool mmc_json = false;
  mmc->add_option("--lambda", mmc_params.lambda, "Arrivals per second")->check(CLI::PositiveNumber)->capture_default_str();
  mmc->add_option("--mu", mmc_params.mu, "Services per second per server")->check(CLI::PositiveNumber)->capture_default_str();
  mmc->add_option("--servers,-c", mmc_params.servers, "Number of servers")->check(CLI::Range(1u, 100000u))->capture_default_str();
  mmc->add_option("--customers", mmc_params.customers, "Customers to serve")->check(CLI::Range(1ull, 1'000'000'000ull))->capture_default_str();
  mmc->add_option("--seed", mmc_params.seed, "Seed")->capture_default_str();
  mmc->add_flag("--json", mmc_json, "Print the result as JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitInvalid;
  }
#ifdef RELAYSIM_MUTANTS_CLI
  if (*mutants) {
    if (list_mutants) {
      for (int i = 1; i < relaysim::kMutantCount; ++i) {
        const auto m = static_cast<relaysim::Mutant>(i);
        std::printf("%-28s %s\n", std::string(to_string(m)).c_str(), std::string(describe(m)).c_str());
      }
      return 0;
    }
    return relaysim::cli::run_mutants(mutants_options);
  }
  if (*run && !mutant_name.empty()) {
    const auto m = relaysim::mutant_from_string(mutant_name);
    if (!m) {
      std::cerr << "relaysim: no mutant named '" << mutant_name << "' (see `mutants --list`)\n";
      return kExitInvalid;
    }
    relaysim::mutants::active() = *m;
    std::cerr << "relaysim: running with the planted bug '" << mutant_name << "'\n";
  }
#endif
  if (*run) return run_command(file, seed, store, json_path, sqlite_path, quiet);
  if (*validate) return validate_command(files);
  if (*mmc) return mmc_command(mmc_params, mmc_json);
  if (*metrics) {
    for (const auto& m : metric_catalog()) std::printf("%-28s %s\n", std::string(m.name).c_str(), std::string(m.meaning).c_str());
    return 0;
  }
  return kExitInvalid;
}
