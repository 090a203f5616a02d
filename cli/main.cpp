// relaysim: the command-line front end.
//
// Outside the live service, the wall clock, signals and the machine's memory are read only by the
// command line (here, cli/commands.cpp, cli/sweep.cpp) and the pieces of live/ it uses
// (live/machine.cpp, live/parallel.cpp): for the
// progress line, the events-per-second figures, Ctrl-C and the memory limit — never for the
// simulation itself, which stays deterministic.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/plan.h"
#include "cli/report.h"
#include "cli/sweep.h"
#include "sim/queueing/mmc.h"
#include "sim/loader.h"
#include "model/core/assert.h"
#include "sim/scenario/units.h"
#include "sim/scenario/yaml_reader.h"
#include "sim/system.h"
#ifdef RELAYSIM_LIVE_CLI
#include "cli/live_commands.h"
#include "live/serve_file.h"
#endif
#ifdef RELAYSIM_MUTANTS_CLI
#include "cli/mutants.h"
#include "model/core/mutants.h"
#endif

namespace {

using namespace relaysim;
using namespace relaysim::cli;

// Commands of the ./relaysim driver, which `relaysim` itself does not run.
constexpr const char* kDriverCommands[] = {"test", "bench", "build", "mutants", "soak", "fuzz", "docs", "twin"};

const char* kFooter = R"(Commands of the ./relaysim driver (it installs packages, builds, then runs relaysim):
  ./relaysim test [--fast]     build everything and run the whole test suite
  ./relaysim bench [--quick]   the benchmarks, with a summary against their targets
  ./relaysim mutants           run the property suite against every planted bug
  ./relaysim soak [SEEDS [CASES [FIRST]]]
                               the whole property suite from many seeds (default 10 x 1000 cases)
  ./relaysim fuzz [SECONDS]    the fuzz targets: scenario reader, SMS tokens, campaign filters, report input, webhook
                               signatures, the live APIs' requests (webhook and SMS), the live event log
  ./relaysim twin SCENARIO [--load 3m]
                               a webhook scenario run live (serve and world on loopback) and simulated,
                               the figures side by side
  ./relaysim build             just build

Exit status:
  0    every invariant and expectation held (validate: every file is valid)
  1    an invariant or an expectation failed, the run stalled or hit its event limit
  2    the scenario, the command line or an output path is invalid (nothing was run)
  3    the run could not finish: out of memory, or the store failed
  130  interrupted (Ctrl-C or SIGTERM): the partial summary and JSON were written)";

// `relaysim runn`: say which command was meant instead of CLI11's "a subcommand is required".
int unknown_command(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  for (const char* d : kDriverCommands) {
    if (word == d) {
      std::cerr << "relaysim: '" << word << "' is a command of the driver script: run ./relaysim " << word
                << " from the project's directory\n";
      return kExitInvalid;
    }
  }
  std::cerr << "relaysim: no command '" << word << "'" << sim::Reader::suggestion(word, names) << " (the commands:";
  for (const auto& n : names) std::cerr << " " << n;
  std::cerr << "; see relaysim --help)\n";
  return kExitInvalid;
}

// `run --seeds 3`: after CLI11's own message, the nearest option the command has, for each long
// option it does not.
void suggest_options(const CLI::App& app, int argc, char** argv) {
  RELAYSIM_ASSERT(argc >= 1, "a command line names the program");
  if (argc < 3) return;
  const CLI::App* command = nullptr;
  for (const CLI::App* sub : app.get_subcommands({})) command = sub->get_name() == argv[1] ? sub : command;
  if (command == nullptr) return;
  std::vector<std::string> names;
  for (const CLI::Option* o : command->get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  }
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with("--")) continue;
    const std::string name(arg.substr(0, arg.find('=')));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const std::string hint = sim::Reader::suggestion(name, names);
    if (!hint.empty()) std::cerr << "relaysim: " << command->get_name() << ": no option '" << name << "'" << hint << "\n";
  }
}

// Each command's arguments, and the subcommand that fills them: CLI11 writes into the arguments
// while parsing, so they live as long as the app.
struct Commands {
  CLI::App* run = nullptr;
  RunArgs run_args;
#ifdef RELAYSIM_MUTANTS_CLI
  std::string mutant_name;
  CLI::App* mutants = nullptr;
  MutantsOptions mutants_options;
  bool list_mutants = false;
#endif
  CLI::App* sweep = nullptr;
  SweepArgs sweep_args;
  CLI::App* merge = nullptr;
  MergeArgs merge_args;
  CLI::App* plan = nullptr;
  PlanArgs plan_args;
  CLI::App* report = nullptr;
  std::string report_dir;
  CLI::App* validate = nullptr;
  std::vector<std::string> validate_files;
  std::vector<std::string> validate_sets;
  CLI::App* metrics = nullptr;
  std::optional<std::string> metrics_system;
  CLI::App* lifecycles = nullptr;
  std::string lifecycles_dir;
  CLI::App* reference = nullptr;
  CLI::App* mmc = nullptr;
  MmcArgs mmc_args;
#ifdef RELAYSIM_LIVE_CLI
  CLI::App* serve = nullptr;
  live::ServeArgs serve_args;
  CLI::App* keys = nullptr;
  live::KeysArgs keys_args;
  CLI::App* world = nullptr;
  live::WorldArgs world_args;
  CLI::App* judge = nullptr;
  live::JudgeArgs judge_args;
#endif
};

CLI::App* declare_run(CLI::App& app, RunArgs& run_args) {
  auto* run = app.add_subcommand("run", "Run a scenario file and judge it against the invariants and its expect: block");
  run->add_option("FILE", run_args.file, "Scenario file (YAML; '-': standard input); see docs/scenario-format.md")->required();
  run->add_option("--seed", run_args.seed, "Root seed (0 to 18446744073709551615), overriding the scenario's");
  run->add_option("--store", run_args.store, "Store to run on, overriding the scenario's")
      ->check(CLI::IsMember({"memory", "sqlite"}));
  run->add_option("--sqlite-path", run_args.sqlite_path,
                  "Database file for the SQLite store (implies --store sqlite); it must be new or empty");
  run->add_flag("--overwrite", run_args.overwrite, "Replace the database at --sqlite-path if it holds an earlier run");
  run->add_option("--json", run_args.json_path, "Also write the result as JSON to this path ('-': standard output)");
  run->add_option("--max-events", run_args.max_events,
                  "Stop after this many events, as a livelock (default: 1000 per client call + 100 million)");
  run->add_option("--memory-limit", run_args.memory_limit,
                  "Refuse a scenario estimated to need more, and stop a run that holds more, than this much memory: "
                  "a size such as 4GiB or 500MiB, or 'none' (default: 90% of the memory available now, within ulimit -v)");
  run->add_flag("--force", run_args.force,
                "Run even when the scenario is estimated to need more than --memory-limit; the limit still stops "
                "the run if it really does");
  run->add_flag("-q,--quiet", run_args.quiet, "Print nothing but errors; the exit status tells the verdict");
  run->add_option("--set", run_args.sets,
                  "Set a value over the file's own, as key.path=value (repeatable): --set webhook.platform.pods=8, "
                  "--set webhook.world.endpoints.0.errors.rate=5%; read as strictly as the file");
  run->add_option("--scale", run_args.scale,
                  "Run a copy N times smaller, as 1:N: the load, each pod's dispatch slots and URL cache, the tenants "
                  "and the endpoints divided by N (after --set), so every station stays as busy (a warning says when "
                  "rounding the slots could not keep it), for a quick look at a big scenario (webhook; docs/planning.md)");
  run->add_option("--timeseries", run_args.timeseries,
                  "Write the run's time series: to FILE.csv alone, or to a directory with series.csv, series.om "
                  "(the same in OpenMetrics text), timeline.csv "
                  "(faults, crashes, breaker transitions), records.csv (every entity that did not end well), result.json "
                  "and scenario.yaml, which `relaysim report` reads (docs/outputs.md)");
  run->add_option("--interval", run_args.interval, "The time series' window of virtual time (default 1m): 10s, 5m, 1h");
  run->add_option("--start-time", run_args.start_time,
                  "The Unix time (seconds) series.om stamps the run's start with, for a Prometheus to load it "
                  "(default 0: virtual time has no date; docs/outputs.md)");
  return run;
}

#ifdef RELAYSIM_MUTANTS_CLI
CLI::App* declare_mutants(CLI::App& app, MutantsOptions& mutants_options, bool& list_mutants) {
  auto* mutants = app.add_subcommand("mutants", "Run the property suites against every planted bug; exit 0 if all are caught");
  mutants->add_option("--only", mutants_options.only, "Run one mutant");
  mutants->add_option("--cases", mutants_options.cases, "RapidCheck cases per property (a quarter on SQLite)")
      ->check(CLI::Range(1, 1'000'000));
  mutants->add_option("--seed", mutants_options.seed, "RapidCheck seed");
  mutants->add_option("--report", mutants_options.report, "Where to write the Markdown table");
  mutants->add_option("--scenarios", mutants_options.scenarios_dir, "Where to write shrunk scenarios");
  mutants->add_flag("--list", list_mutants, "List the mutants and exit");
  return mutants;
}
#endif

CLI::App* declare_sweep(CLI::App& app, SweepArgs& sweep_args) {
  auto* sweep = app.add_subcommand(
      "sweep", "Run a scenario over a grid of values and seeds in parallel; tabulate every metric's mean with its 95% "
               "confidence interval at each point (docs/planning.md)");
  sweep->add_option("FILE", sweep_args.file, "Scenario file (YAML)")->required();
  sweep->add_option("--vary", sweep_args.vary,
                    "An axis of the grid (repeatable): key.path=FROM..TO, FROM..TO:STEP, or a,b,c: "
                    "--vary webhook.platform.pods=2..16:2 --vary webhook.platform.url_cache.ttl=1m,5m");
  sweep->add_option("--set", sweep_args.sets, "Set a value under every point, as key.path=value (repeatable)");
  sweep->add_option("--replications,-r", sweep_args.replications,
                    "Runs per point, replication r with seed + r (default 5; at least 2 for an interval)");
  sweep->add_option("--seed", sweep_args.seed, "Base seed, overriding the scenario's");
  sweep->add_option("--store", sweep_args.store, "Store to run on, overriding the scenario's")->check(CLI::IsMember({"memory", "sqlite"}));
  sweep->add_option("--jobs,-j", sweep_args.jobs, "Runs at once (default: one per core; fewer when they would not fit in memory)");
  sweep->add_option("--memory-limit", sweep_args.memory_limit,
                    "What the runs at once may hold together, as estimated from the scenario: a size (4GiB) or 'none' "
                    "(default: most of the memory available)");
  sweep->add_option("--shard", sweep_args.shard,
                    "Run only part I of N of the sweep (I/N, such as 2/4), writing its runs to --out for `relaysim merge`");
  sweep->add_option("--out", sweep_args.out,
                    "Write sweep.json, runs.csv (every run), latency.csv (each point's latency pooled), summary.csv, tails.csv "
                    "(latency percentiles of the pooled runs) and summary.json here; Ctrl-C stops the sweep and writes the "
                    "runs it finished");
  sweep->add_option("--show", sweep_args.show, "Metrics for the printed table (default: those the scenario's expect: names)");
  sweep->add_flag("-q,--quiet", sweep_args.quiet, "Print nothing but errors");
  return sweep;
}

CLI::App* declare_merge(CLI::App& app, MergeArgs& merge_args) {
  auto* merge = app.add_subcommand("merge", "Merge the --out directories of a sharded sweep into the table of the whole sweep");
  merge->add_option("OUT", merge_args.out, "Directory for the merged sweep.json, runs.csv, latency.csv, summary.csv, tails.csv and summary.json")->required();
  merge->add_option("PARTS", merge_args.parts, "Every shard's --out directory")->required();
  merge->add_option("--show", merge_args.show, "Metrics for the printed table (default: those the scenario's expect: names)");
  return merge;
}

CLI::App* declare_plan(CLI::App& app, PlanArgs& plan_args) {
  auto* plan = app.add_subcommand(
      "plan", "Find the least value of a resource that meets targets written like expect:, by simulation with several "
              "seeds per probe and 95% confidence, beside queueing theory's estimate (docs/planning.md)");
  plan->add_option("FILE", plan_args.file, "Scenario file (YAML)")->required();
  plan->add_option("--resource", plan_args.resource, "The key path of a whole number to size: webhook.platform.pods")->required();
  plan->add_option("--target", plan_args.targets, "A target, as a line of expect: (repeatable): 'latency_p99_s < 30s'")->required();
  plan->add_option("--range", plan_args.range, "The values to search, FROM..TO (default 1..1024)");
  plan->add_option("--set", plan_args.sets, "Set a value of the scenario, as key.path=value (repeatable)");
  plan->add_option("--replications,-r", plan_args.replications, "Runs per probe to start with (default 5)");
  plan->add_option("--max-replications", plan_args.max_replications,
                   "Runs per probe at most, doubling while a target's interval straddles it (default 40)");
  plan->add_option("--seed", plan_args.seed, "Base seed: replication r runs with seed + r");
  plan->add_option("--jobs,-j", plan_args.jobs, "Runs at once (default: one per core; fewer when they would not fit in memory)");
  plan->add_option("--memory-limit", plan_args.memory_limit,
                   "What the runs at once may hold together, as estimated from the scenario: a size (4GiB) or 'none' "
                   "(default: most of the memory available)");
  plan->add_option("--json", plan_args.json_path, "Also write the probes and the answer as JSON here ('-': standard output, the text then going to standard error)");
  plan->add_flag("-q,--quiet", plan_args.quiet, "Print only the answer");
  return plan;
}

CLI::App* declare_report(CLI::App& app, std::string& report_dir) {
  auto* report = app.add_subcommand(
      "report", "Write report.html (self-contained) and report.md from what `run --timeseries DIR` or "
                "`sweep --out DIR` wrote: for a run, the pipeline with its measured flows (Graphviz), the time series "
                "by panel with fault windows shaded, the states over time and the latency CDF by group (gnuplot); "
                "for a sweep, each expected metric against the first axis with its 95% band");
  report->add_option("DIR", report_dir, "The result directory")->required();
  return report;
}

CLI::App* declare_validate(CLI::App& app, std::vector<std::string>& files, std::vector<std::string>& validate_sets) {
  auto* validate = app.add_subcommand("validate", "Check scenario files without running them; print what each would cost, and its load at the peak against its capacity (a warning where it cannot keep up)");
  validate->add_option("FILES", files, "Scenario files ('-': standard input)")->required();
  validate->add_option("--set", validate_sets, "Set a value over each file's own, as key.path=value (repeatable), as run does");
  return validate;
}

CLI::App* declare_metrics(CLI::App& app, std::optional<std::string>& metrics_system) {
  auto* metrics = app.add_subcommand("metrics", "List the metrics an expect: block may name, with their units");
  metrics->add_option("--system", metrics_system, "Only this system's");
  return metrics;
}

CLI::App* declare_lifecycles(CLI::App& app, std::string& lifecycles_dir) {
  auto* lifecycles = app.add_subcommand(
      "lifecycles", "Write DIR/lifecycles.md and a Graphviz diagram of every lifecycle (.dot and .svg) from the model's own tables");
  lifecycles->add_option("DIR", lifecycles_dir, "Where to write them (the docs directory: docs)")->required();
  return lifecycles;
}

CLI::App* declare_reference(CLI::App& app) {
  return app.add_subcommand(
      "reference", "Print the reference of the scenario format (every key, metric and invariant) as Markdown");
}

CLI::App* declare_mmc(CLI::App& app, MmcArgs& mmc_args) {
  auto* mmc = app.add_subcommand("mmc", "Run the M/M/c queue on the simulation kernel; print its speed and mean wait "
                                        "next to Erlang C (the SimPy comparison in bench/ calls this)");
  mmc->add_option("--lambda", mmc_args.params.lambda, "Arrivals per second")->capture_default_str();
  mmc->add_option("--mu", mmc_args.params.mu, "Services per second per server")->capture_default_str();
  mmc->add_option("--servers,-c", mmc_args.params.servers, "Number of servers")
      ->check(CLI::Range(1u, 10000u))
      ->capture_default_str();
  mmc->add_option("--customers", mmc_args.params.customers, "Customers to serve")
      ->check(CLI::Range(1ull, 1'000'000'000ull))
      ->capture_default_str();
  mmc->add_option("--seed", mmc_args.seed, "Seed (0 to 18446744073709551615)");
  mmc->add_flag("--json", mmc_args.json, "Print the result as JSON");
  return mmc;
}

#ifdef RELAYSIM_LIVE_CLI
CLI::App* declare_serve(CLI::App& app, live::ServeArgs& serve_args) {
  auto* serve = app.add_subcommand("serve", "Serve the webhook platform, the SMS gateway (a file with `system: sms`) or "
                                            "the outbox relay (`system: outbox`: on PostgreSQL, etcd and Redis) for "
                                            "real (docs/live.md); SIGTERM drains and exits");
  serve->add_option("CONFIG", serve_args.config, "The configuration file (system:, serve: and platform: sections)");
  serve->add_option("--listen", serve_args.listen, "Listen here instead (HOST:PORT; port 0: any free port)");
  serve->add_option("--database", serve_args.database, "Use this database file instead");
  serve->add_option("--pod", serve_args.pod, "This process's pod number instead (several processes on one database)")
      ->check(CLI::Range(1u, live::kMaxPod));
  serve->add_option("--events", serve_args.events,
                    "Append the model's events to this file, one JSON line each, for `relaysim judge` (docs/live.md)");
  serve->add_option("--crash-after-commit", serve_args.crash_after_commit,
                    "A test's crash point (the outbox relay, with --events): kill this process (SIGKILL) right after "
                    "the Nth change it commits to a shard, before that change's line is logged (docs/live.md)")
      ->check(CLI::Range(1u, 1'000'000'000u));
  serve->add_flag("--check", serve_args.check, "Read and check the configuration, then exit");
  serve->add_flag("--reference", serve_args.reference,
                  "Print the reference of the serve: sections (the webhook platform's, the SMS gateway's, the outbox "
                  "relay's) and of the outbox relay's event log as Markdown (docs/live.md)");
  return serve;
}

CLI::App* declare_keys(CLI::App& app, live::KeysArgs& keys_args) {
  auto* keys = app.add_subcommand("keys", "Make, revoke and list the live API's keys, in the database of a serve "
                                          "configuration (docs/live.md); a new key is printed once");
  keys->add_option("CONFIG", keys_args.config, "The serve configuration file")->required();
  keys->add_option("--database", keys_args.database, "Use this database file instead");
  auto* admin = keys->add_flag("--admin", keys_args.admin, "Make an admin key: it may do everything");
  auto* tenant = keys->add_option("--tenant", keys_args.tenant, "Make a key for this tenant (cxid): its own requests only");
  auto* revoke = keys->add_option("--revoke", keys_args.revoke, "Revoke the key with this id")
                     ->check(CLI::Validator(
                         [](std::string& id) {
                           const bool whole = !id.empty() && id.size() <= 19 && id[0] != '0' &&
                                              std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; });
                           return whole ? std::string() : "a key id is a whole number from 1, as `relaysim keys CONFIG` lists it";
                         },
                         "ID"));
  auto* list = keys->add_flag("--list", keys_args.list, "List the keys (the default): id, tenant, made, revoked");
  admin->excludes(tenant)->excludes(revoke)->excludes(list);
  tenant->excludes(revoke)->excludes(list);
  revoke->excludes(list);
  return keys;
}

CLI::App* declare_world(CLI::App& app, live::WorldArgs& world_args) {
  auto* world = app.add_subcommand("world", "Serve a scenario's dependencies on HTTP, misbehaving as the scenario says: a "
                                            "webhook scenario's ServiceB and endpoints, for `serve` to deliver to; an SMS "
                                            "scenario's providers, for the SMS gateway to submit to; an outbox scenario's "
                                            "downstream, for the relay's consumers to hand records to (docs/live.md)");
  world->add_option("SCENARIO", world_args.scenario, "A webhook, SMS or outbox scenario file")->required();
  world->add_option("--listen", world_args.listen,
                    "Where to listen (HOST:PORT; port 0: any free port; default 127.0.0.1:8081, for an SMS scenario "
                    "127.0.0.1:8091, for an outbox scenario 127.0.0.1:8093)");
  world->add_option("--serve", world_args.serve,
                    "An SMS scenario: the SMS gateway's serve configuration, whose address its providers' receipts "
                    "go to, with the secrets its serve.providers give. An outbox scenario: the relay's, whose message "
                    "types and handle_timeout its records carry");
  world->add_option("--effects", world_args.effects,
                    "An outbox scenario: the downstream's SQLite database, its inbox and its effects (default: in memory)");
  world->add_option("--gateway", world_args.gateway,
                    "An SMS scenario: post receipts to this gateway (http://HOST:PORT) instead of the address "
                    "--serve's file listens on (a serve started with --listen)");
  world->add_option("--receipts", world_args.receipts,
                    "Append every request an endpoint (or a provider) processes to this file, one JSON line each");
  world->add_option("--signing-secret", world_args.signing_secret, "Verify deliveries' signatures with this key (whsec_...)");
  world->add_option("--hold", world_args.hold,
                    "How long an unanswered request keeps its connection (default 5m; an SMS or outbox world's 30s)");
  world->add_option("--drive", world_args.drive,
                    "Also be the scenario's clients: send its load, on the world's clock until its duration, to this "
                    "serve (http://HOST:PORT; repeat for several, called in turn), with the key in RELAYSIM_API_KEY");
  world->add_option("--calls", world_args.calls, "With --drive: write the calls made, one JSON line each, for relaysim judge");
  return world;
}

CLI::App* declare_judge(CLI::App& app, live::JudgeArgs& judge_args) {
  auto* judge = app.add_subcommand("judge", "Judge a live run (serve's event logs, world's receipts, the clients' calls) "
                                            "with the simulator's own invariant checkers; the serve configuration's "
                                            "system: chooses which (docs/live.md)");
  judge->add_option("SCENARIO", judge_args.scenario, "The scenario the world served")->required();
  judge->add_option("CONFIG", judge_args.config, "The configuration serve ran with")->required();
  judge->add_option("--events", judge_args.events, "A serve process's event log (serve --events); one per process")->required();
  judge->add_option("--receipts", judge_args.receipts, "The world's receipts (world --receipts)")->required();
  judge->add_option("--calls", judge_args.calls,
                    "The clients' calls, one JSON line each (docs/live.md): the webhook platform's creates (required), "
                    "the SMS gateway's sends (optional: without them S-scope is not judged)");
  judge->add_option("--database", judge_args.database,
                    "The database the processes shared, after the run (the webhook platform's and the SMS gateway's; "
                    "the outbox relay's shards are its serve file's)");
  judge->add_option("--json", judge_args.json,
                    "Also write the verdict and the run's figures (for the webhook platform: every metric of `relaysim "
                    "metrics` but utilisation, counted by the simulator's own code) as JSON to this file");
  return judge;
}
#endif

// The order here is the order of the commands in --help.
void declare_commands(CLI::App& app, Commands& c) {
  c.run = declare_run(app, c.run_args);
#ifdef RELAYSIM_MUTANTS_CLI
  // relaysim-mutants' run takes one more option, after all of run's own.
  c.run->add_option("--mutant", c.mutant_name, "Plant this bug for the run (see `mutants --list`)");
  c.mutants = declare_mutants(app, c.mutants_options, c.list_mutants);
#endif
  c.sweep = declare_sweep(app, c.sweep_args);
  c.merge = declare_merge(app, c.merge_args);
  c.plan = declare_plan(app, c.plan_args);
  c.report = declare_report(app, c.report_dir);
  c.validate = declare_validate(app, c.validate_files, c.validate_sets);
  c.metrics = declare_metrics(app, c.metrics_system);
  c.lifecycles = declare_lifecycles(app, c.lifecycles_dir);
  c.reference = declare_reference(app);
  c.mmc = declare_mmc(app, c.mmc_args);
#ifdef RELAYSIM_LIVE_CLI
  c.serve = declare_serve(app, c.serve_args);
  c.keys = declare_keys(app, c.keys_args);
  c.world = declare_world(app, c.world_args);
  c.judge = declare_judge(app, c.judge_args);
#endif
}

#ifdef RELAYSIM_MUTANTS_CLI
// `mutants --list`.
void print_mutants() {
  for (const sim::System* s : sim::systems()) {
    for (const Mutant* m : s->mutants()) {
      std::printf("%-28s %-8s %s\n", std::string(m->name).c_str(), std::string(s->name()).c_str(),
                  std::string(m->description).c_str());
    }
  }
}

// `run --mutant NAME`: plants the bug for the run; false (having said so) when no mutant has that name.
bool plant_mutant(const std::string& mutant_name) {
  const Mutant* found = nullptr;
  for (const sim::System* s : sim::systems()) {
    for (const Mutant* m : s->mutants()) found = m->name == mutant_name ? m : found;
  }
  if (found == nullptr) {
    std::cerr << "relaysim: no mutant named '" << mutant_name << "' (see `mutants --list`)\n";
    return false;
  }
  mutants::active() = found;
  std::cerr << "relaysim: running with the planted bug '" << mutant_name << "'\n";
  return true;
}
#endif

// Runs the command the command line chose; returns the exit status.
int run_chosen_command(const Commands& c) {
#ifdef RELAYSIM_MUTANTS_CLI
  if (*c.mutants) {
    if (c.list_mutants) {
      print_mutants();
      return 0;
    }
    return run_mutants(c.mutants_options);
  }
  if (*c.run && !c.mutant_name.empty() && !plant_mutant(c.mutant_name)) return kExitInvalid;
#endif
#ifdef RELAYSIM_LIVE_CLI
  if (*c.serve) return live::serve_command(c.serve_args);
  if (*c.keys) return live::keys_command(c.keys_args);
  if (*c.world) return live::world_command(c.world_args);
  if (*c.judge) return live::judge_command(c.judge_args);
#endif
  if (*c.run) return run_command(c.run_args);
  if (*c.validate) return validate_command(c.validate_files, c.validate_sets);
  if (*c.sweep) return sweep_command(c.sweep_args);
  if (*c.plan) return plan_command(c.plan_args);
  if (*c.report) return report_command(c.report_dir);
  if (*c.merge) return merge_command(c.merge_args);
  if (*c.mmc) return mmc_command(c.mmc_args);
  if (*c.metrics) return metrics_command(c.metrics_system);
  if (*c.reference) return reference_command();
  if (*c.lifecycles) return lifecycles_command(c.lifecycles_dir);
  return kExitInvalid;
}

}  // namespace

int main(int argc, char** argv) {
  // A reader that goes away (`| head`, a FIFO's reader, >(jq) failing) must not kill a run before
  // it has labelled its database and said what happened: writes fail with EPIPE instead.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"relaysim " RELAYSIM_VERSION
               ": a deterministic simulator and reference implementation of reliable outbound delivery",
               "relaysim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "relaysim " RELAYSIM_VERSION);
  app.footer(kFooter);
  Commands commands;
  declare_commands(app, commands);

  if (argc >= 2 && argv[1][0] != '-') {
    const std::string word = argv[1];
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) known = known || sub->get_name() == word;
    if (!known) return unknown_command(app, word);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    if (code != 0) suggest_options(app, argc, argv);
    return code == 0 ? 0 : kExitInvalid;
  }
  return run_chosen_command(commands);
}
