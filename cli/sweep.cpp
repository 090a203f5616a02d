// `relaysim sweep` and `relaysim merge`. The runs of a sweep are independent, so they go to a pool
// of threads, one run per thread at a time; each run is the same single-threaded, deterministic
// run_scenario as `relaysim run`, so a sweep's table does not depend on how many threads ran it,
// nor on how it was sharded.
#include "cli/sweep.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "cli/commands.h"
#include "live/machine.h"
#include "live/parallel.h"
#include "cli/result_dir.h"
#include "model/core/assert.h"
#include "model/core/random.h"
#include "sim/plan/sweep.h"
#include "sim/report/metric.h"
#include "sim/run.h"
#include "sim/loader.h"
#include "sim/writer.h"
#include "sim/system.h"

namespace relaysim::cli {

using live::EachRun;
using live::RunJob;
using live::RunOutcome;
using live::memory_limit_of;
using live::run_parallel;
using live::runs_at_once;
using live::stop_requested;

namespace {

using namespace relaysim::sim;
namespace fs = std::filesystem;




std::string fmt_mean(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, v == std::floor(v) ? "%.0f" : "%.1f", v);
  return buf;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", s);
  return buf;
}

// What the printed table shows: the metrics asked for, or those the scenario's expect: names.
std::vector<std::size_t> shown_metrics(const SweepPlan& plan, const std::vector<std::string>& asked, std::string& problem) {
  std::vector<std::size_t> out;
  const auto index = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < plan.metrics.size(); ++i) {
      if (plan.metrics[i] == name) return i;
    }
    return std::nullopt;
  };
  for (const std::string& name : asked) {
    if (const auto i = index(name)) {
      out.push_back(*i);
    } else {
      problem = "--show: the " + plan.system + " system has no metric '" + name + "' (see relaysim metrics)";
      return {};
    }
  }
  if (!asked.empty()) return out;
  for (const std::string& name : plan.expected) {
    const auto i = index(name);
    if (i && std::find(out.begin(), out.end(), *i) == out.end() && out.size() < 4) out.push_back(*i);
  }
  return out;
}

void print_table(std::ostream& out, const SweepPlan& plan, const System& system, const std::vector<SweepPoint>& points,
                 const std::vector<std::size_t>& shown) {
  const auto infos = system.metrics();
  const auto unit_of = [&](const std::string& name) {
    const auto m = find_metric(infos, name);
    return m ? infos[m->index].unit : Unit::number;
  };
  // A shown percentile of the latency is its tail estimate, when the sweep pooled the latency.
  const std::vector<SweepPlan::Tail> tails = plan.tails();
  const auto tail_of = [&](const SweepPoint& p, std::size_t m) -> const TailEstimate* {
    for (std::size_t i = 0; i < p.tails.size(); ++i) {
      if (tails[i].metric == m) return &p.tails[i];
    }
    return nullptr;
  };
  for (const Axis& a : plan.axes) out << a.path << "  ";
  out << "passed";
  for (std::size_t m : shown) {
    out << "  |  " << plan.metrics[m] << (!points.empty() && tail_of(points.front(), m) ? " (pooled, 95% CI)" : " (mean ± 95% CI)");
  }
  out << "\n";
  bool few = false;
  for (const SweepPoint& p : points) {
    RELAYSIM_ASSERT(p.values.size() == plan.axes.size() && p.tails.size() <= tails.size(), "a point of this sweep");
    for (std::size_t a = 0; a < plan.axes.size(); ++a) out << p.values[a] << "  ";
    out << p.passed << "/" << p.runs;
    for (std::size_t m : shown) {
      if (const TailEstimate* t = tail_of(p, m)) {
        const auto text = [](double v) { return std::isinf(v) ? std::string("?") : format_value(Unit::seconds, v); };
        out << "  |  " << text(t->value);
        if (!std::isnan(t->ci_low)) out << " [" << text(t->ci_low) << ", " << text(t->ci_high) << "]";
        if (!t->enough() && t->samples > 0) {
          out << " (" << t->beyond << " beyond)";
          few = true;
        }
        continue;
      }
      const Estimate& e = p.metrics[m];
      const Unit u = unit_of(plan.metrics[m]);
      // A mean of counts is rarely whole: one decimal, not an exponent.
      out << "  |  " << (u == Unit::count && !std::isnan(e.mean) ? fmt_mean(e.mean) : format_value(u, e.mean));
      if (e.n >= 2) out << " ± " << format_value(u == Unit::count ? Unit::number : u, e.half_width());
    }
    out << "\n";
  }
  if (few) out << "note: a percentile with fewer than 10 durations beyond it is a guess: more replications, or a longer run.\n";
}

// A steady-state figure wants the warm-up to cover the ramp: say where the backlog settled after it
// (by MSER-5, as settle_time_s measures it), at how many points, and the warm-up that would do.
// Not where the runs had a fault (drain_time_s has a figure): their figures are the fault's, and a
// warm-up that cut into it would hide what the run is for.
void print_settle_note(std::ostream& out, const SweepPlan& plan, const std::vector<Scenario>& scenarios, const std::vector<SweepPoint>& points) {
  const auto column = [&plan](std::string_view name) {
    const auto m = std::find(plan.metrics.begin(), plan.metrics.end(), name);
    RELAYSIM_ASSERT(m != plan.metrics.end(), "every system has the run metrics settle_time_s and drain_time_s");
    return static_cast<std::size_t>(m - plan.metrics.begin());
  };
  const std::size_t index = column("settle_time_s");
  const std::size_t drain = column("drain_time_s");
  RELAYSIM_ASSERT(scenarios.size() == plan.points(), "a scenario for every point");
  std::size_t late = 0;
  double latest = 0;
  for (const SweepPoint& p : points) {
    if (p.metrics[drain].n > 0) continue;  // a run with a fault window
    const double settle = p.metrics[index].mean;
    if (!std::isnan(settle) && settle > to_seconds(scenarios[p.point].warmup)) {
      ++late;
      latest = std::max(latest, settle);
    }
  }
  if (late == 0) return;
  out << "note: at " << late << " of " << points.size() << (points.size() == 1 ? " point" : " points")
      << " the backlog settles (MSER-5, settle_time_s) after the warm-up, at up to " << format_value(Unit::seconds, latest)
      << ": the figures there include the ramp from an empty system. For steady-state figures, --set warmup=" << fmt_mean(std::ceil(latest))
      << "s or more.\n";
}

std::optional<std::string> write_summary(const fs::path& dir, const SweepPlan& plan, const std::vector<SweepPoint>& points) {
  std::ostringstream csv;
  write_summary_csv(csv, plan, points);
  if (auto problem = write_text(dir / "summary.csv", csv.str())) return problem;
  std::ostringstream tails;
  write_tails_csv(tails, plan, points);
  if (auto problem = write_text(dir / "tails.csv", tails.str())) return problem;
  return write_text(dir / "summary.json", summary_json(plan, points).dump(2) + "\n");
}

// What a shard (or an interrupted sweep) leaves for `merge`: its runs, the latency it pooled, and
// what defines the sweep.
std::optional<std::string> write_runs(const fs::path& dir, const SweepPlan& plan, std::vector<SweepRun> runs, const PooledLatency& pooled) {
  std::sort(runs.begin(), runs.end(), [](const SweepRun& a, const SweepRun& b) { return a.run < b.run; });
  std::ostringstream csv;
  write_runs_header(csv, plan);
  for (const SweepRun& r : runs) write_run(csv, plan, r);
  if (auto problem = write_text(dir / "runs.csv", csv.str())) return problem;
  if (!pooled.empty()) {
    std::ostringstream latency;
    write_pooled(latency, pooled);
    if (auto problem = write_text(dir / "latency.csv", latency.str())) return problem;
  }
  return write_text(dir / "sweep.json", plan.to_json().dump(2) + "\n");
}

// The files a sweep's --out holds: a directory of anything else is not overwritten.
constexpr std::initializer_list<const char*> kSweepFiles = {"sweep.json", "runs.csv", "latency.csv", "summary.csv", "tails.csv", "summary.json"};

std::optional<std::uint32_t> parse_count(const std::optional<std::string>& text, std::uint32_t fallback, std::uint32_t max) {
  if (!text) return fallback;
  const auto n = parse_u64(*text);
  if (!n || *n == 0 || *n > max) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

// What the steps of a sweep share: the options read, the scenario at every point, and the runs.
struct SweepState {
  explicit SweepState(const SweepArgs& sweep_args) : args(sweep_args) {}

  const SweepArgs& args;
  SweepPlan plan;
  std::uint32_t jobs = 0;
  double memory_limit = 0;
  Scenario base;
  std::vector<Override> sets;
  ScenarioText file;
  std::vector<std::size_t> shown;
  std::vector<Scenario> points;
  std::vector<std::size_t> mine;  // the runs of this shard
  std::uint32_t threads = 0;
  double wall = 0;  // seconds the runs took
  PooledLatency pooled;
  std::vector<SweepRun> results;
  std::size_t passed = 0;
};

// Each step returns an exit code when the sweep ends there, nothing when it goes on.

std::optional<int> read_shard(SweepState& sweep) {
  // Whole numbers exactly as written: sscanf's %u would wrap 4294967297 to 1.
  const std::string& text = *sweep.args.shard;
  const std::size_t slash = text.find('/');
  std::uint32_t i = 0, n = 0;
  const auto whole = [](std::string_view t, std::uint32_t& out) {
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return !t.empty() && ec == std::errc() && end == t.data() + t.size();
  };
  if (slash == std::string::npos || !whole(std::string_view(text).substr(0, slash), i) ||
      !whole(std::string_view(text).substr(slash + 1), n) || n == 0 || i == 0 || i > n) {
    return fail_usage("--shard: expected I/N with 1 <= I <= N <= 4294967295, such as 2/4, got '" + text + "'");
  }
  sweep.plan.shard = i;
  sweep.plan.shards = n;
  if (!sweep.args.out) return fail_usage("--shard writes its runs for `relaysim merge`: give --out DIR");
  return std::nullopt;
}

std::optional<int> read_options(SweepState& sweep) {
  const SweepArgs& args = sweep.args;
  sweep.plan.file = args.file;
  const auto replications = parse_count(args.replications, 5, 100'000);
  if (!replications) return fail_usage("--replications: expected a whole number from 1 to 100000");
  sweep.plan.replications = *replications;
  const auto jobs = parse_count(args.jobs, std::max(1u, std::thread::hardware_concurrency()), 4096);
  if (!jobs) return fail_usage("--jobs: expected a whole number from 1 to 4096");
  sweep.jobs = *jobs;
  std::string memory_problem;
  const std::optional<double> memory_limit = memory_limit_of(args.memory_limit, memory_problem);
  if (!memory_limit) return fail_usage(memory_problem);
  sweep.memory_limit = *memory_limit;
  if (args.shard) {
    if (auto code = read_shard(sweep)) return code;
  }
  if (args.vary.empty()) return fail_usage("sweep needs at least one --vary key.path=values (2..16, 2..16:2, or a,b,c)");
  return std::nullopt;
}

std::optional<int> read_scenario(SweepState& sweep) {
  const SweepArgs& args = sweep.args;
  SweepPlan& plan = sweep.plan;
  try {
    sweep.file = read_scenario_file(args.file);
    for (const std::string& v : args.vary) {
      plan.axes.push_back(parse_axis(v));
      // A key varied twice: the later axis would override the earlier at every point, and the
      // table would label rows with values no run used.
      for (std::size_t i = 0; i + 1 < plan.axes.size(); ++i) {
        if (plan.axes[i].path == plan.axes.back().path) {
          throw ScenarioError("--vary", 0, 0, plan.axes.back().path, "is varied twice; give all its values in one --vary");
        }
      }
    }
    for (const std::string& s : args.sets) sweep.sets.push_back(parse_override(s));
    sweep.base = parse_scenario(sweep.file.text, sweep.file.name, sweep.sets);
  } catch (const ScenarioError& e) {
    std::cerr << "relaysim: invalid sweep: " << e.what() << "\n";
    return kExitInvalid;
  }
  if (plan.points() > kMaxPoints || plan.runs() > kMaxRuns) return fail_usage("the sweep has more than a million points or ten million runs");
  return std::nullopt;
}

// What defines the sweep beyond its grid (the seed, the system, its metrics), and what the table shows.
std::optional<int> describe_plan(SweepState& sweep) {
  const SweepArgs& args = sweep.args;
  SweepPlan& plan = sweep.plan;
  Scenario& base = sweep.base;
  if (args.seed) {
    const auto seed = parse_u64(*args.seed);
    if (!seed) return fail_usage("--seed: expected a whole number from 0 to 18446744073709551615");
    base.seed = *seed;
  }
  if (args.store == "memory") base.store = StoreKind::memory;
  if (args.store == "sqlite") base.store = StoreKind::sqlite;
  plan.seed = base.seed;
  RELAYSIM_ASSERT(base.system != nullptr, "a scenario names its system");
  plan.system = std::string(base.system->name());
  plan.scenario_hash = hash_bytes(write_scenario(base));
  for (const MetricInfo& m : base.system->metrics()) {
    if (!is_family(m.name)) plan.metrics.emplace_back(m.name);
  }
  std::string problem;
  for (const Expectation& e : base.expect) plan.expected.push_back(e.name);
  sweep.shown = shown_metrics(plan, args.show, problem);
  if (!problem.empty()) return fail_usage(problem);
  plan.shown = args.show;
  return std::nullopt;
}

// Every point is read before anything runs: a value no point may take is an error now, not
// an hour into the sweep.
std::optional<int> read_points(SweepState& sweep) {
  const SweepPlan& plan = sweep.plan;
  sweep.points.reserve(plan.points());
  try {
    for (std::size_t p = 0; p < plan.points(); ++p) {
      std::vector<Override> o = sweep.sets;
      for (Override& v : plan.overrides(p)) o.push_back(std::move(v));
      sweep.points.push_back(parse_scenario(sweep.file.text, sweep.file.name, o));
      sweep.points.back().store = sweep.base.store;
    }
  } catch (const ScenarioError& e) {
    std::cerr << "relaysim: invalid sweep: " << e.what() << "\n";
    return kExitInvalid;
  }
  return std::nullopt;
}

// Two points that run the same scenario (an axis whose key another --vary or a --set inside
// it overrides, values that mean the same) would be two rows with different labels for one
// configuration.
std::optional<int> check_points_differ(const SweepState& sweep) {
  const SweepPlan& plan = sweep.plan;
  std::unordered_map<std::uint64_t, std::size_t> seen;
  for (std::size_t p = 0; p < sweep.points.size(); ++p) {
    const auto [at, fresh] = seen.emplace(hash_bytes(write_scenario(sweep.points[p])), p);
    if (fresh) continue;
    std::string a, b;
    for (const Override& o : plan.overrides(at->second)) a += (a.empty() ? "" : ", ") + to_string(o);
    for (const Override& o : plan.overrides(p)) b += (b.empty() ? "" : ", ") + to_string(o);
    return fail_usage("the sweep's points " + a + " and " + b +
                      " run the same scenario (one value overrides another, or two values mean the same); "
                      "every point must differ");
  }
  return std::nullopt;
}

// What each run that ran measured, in the sweep's own metrics (a family's figures are not kept).
void keep_results(SweepState& sweep, const std::vector<RunOutcome>& outcomes) {
  const auto infos = sweep.base.system->metrics();
  RELAYSIM_ASSERT(outcomes.size() == sweep.mine.size(), "an outcome for every run of the shard");
  for (std::size_t k = 0; k < sweep.mine.size(); ++k) {
    if (!outcomes[k].ran) continue;
    RELAYSIM_ASSERT(outcomes[k].values.size() == infos.size(), "a run that ran has a value for every metric");
    SweepRun r{sweep.mine[k], outcomes[k].pass, outcomes[k].ending, {}};
    for (std::size_t i = 0; i < infos.size(); ++i) {
      if (!is_family(infos[i].name)) r.values.push_back(outcomes[k].values[i]);
    }
    sweep.passed += r.pass ? 1 : 0;
    sweep.results.push_back(std::move(r));
  }
}

// Runs this shard's runs on the pool of threads, and keeps what each run measured.
std::optional<int> run_sweep(SweepState& sweep) {
  const SweepPlan& plan = sweep.plan;
  for (std::size_t r = 0; r < plan.runs(); ++r) {
    if (plan.mine(r)) sweep.mine.push_back(r);
  }
  std::vector<RunJob> jobs_of;
  for (std::size_t run : sweep.mine) jobs_of.push_back({&sweep.points[plan.point_of(run)], plan.seed_of(run)});
  sweep.threads = std::min<std::uint32_t>(sweep.jobs, static_cast<std::uint32_t>(std::max<std::size_t>(1, sweep.mine.size())));
  const auto started = std::chrono::steady_clock::now();
  std::vector<RunOutcome> outcomes;
  try {
    sweep.threads = runs_at_once(jobs_of, sweep.threads, sweep.memory_limit, sweep.args.quiet, "sweep");
  } catch (const std::exception& e) {
    return fail_usage(e.what());
  }
  // Each point's latency, every run's pooled as it ends, for the tail percentiles.
  sweep.pooled = PooledLatency(plan.points() <= kMaxPooledPoints ? plan.points() : 0);
  const EachRun pool = [&sweep](std::size_t k, const RunResult& r) {
    if (!sweep.pooled.empty()) sweep.pooled[sweep.plan.point_of(sweep.mine[k])].merge(r.groups.all().latency);
  };
  try {
    outcomes = run_parallel(jobs_of, sweep.threads, sweep.args.quiet, "sweep", {}, pool);
  } catch (const std::exception& e) {
    return fail_incomplete(std::string("the sweep stopped: ") + e.what());
  }
  sweep.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  keep_results(sweep, outcomes);
  return std::nullopt;
}

// Writes and prints what the runs found: the runs for `merge`, or the table when the sweep is whole.
int finish(const SweepState& sweep) {
  const SweepArgs& args = sweep.args;
  const SweepPlan& plan = sweep.plan;
  if (args.out) {
    if (auto bad = write_runs(*args.out, plan, sweep.results, sweep.pooled)) return fail_incomplete(*bad);
  }
  if (stop_requested()) {
    std::cerr << "relaysim: sweep interrupted after " << sweep.results.size() << " of its " << sweep.mine.size() << " runs"
              << (args.out ? "; the finished ones are in " + *args.out + "/runs.csv" : std::string("; give --out DIR to keep the finished runs"))
              << "\n";
    return kExitInterrupted;
  }
  const std::uint32_t threads = sweep.threads;
  if (plan.shards > 1) {
    if (!args.quiet) {
      std::cout << "shard " << plan.shard << "/" << plan.shards << ": " << sweep.mine.size() << " of the sweep's " << plan.runs()
                << " runs in " << seconds_text(sweep.wall) << " on " << threads << (threads == 1 ? " thread" : " threads") << "; runs.csv in " << *args.out
                << "\n(relaysim merge OUT " << *args.out << " ... with every shard's directory gives the table)\n";
    }
    return kExitPass;
  }
  const std::vector<SweepPoint> table = summarize(plan, sweep.results, sweep.pooled);
  if (args.out) {
    if (auto bad = write_summary(*args.out, plan, table)) return fail_incomplete(*bad);
  }
  if (!args.quiet) {
    std::cout << "sweep of " << args.file << ": " << plan.points() << " points x " << plan.replications << " replications = "
              << plan.runs() << " runs in " << seconds_text(sweep.wall) << " on " << threads << (threads == 1 ? " thread; " : " threads; ")
              << sweep.passed << " passed\n";
    print_table(std::cout, plan, *sweep.base.system, table, sweep.shown);
    print_settle_note(std::cout, plan, sweep.points, table);
  }
  return kExitPass;
}

}  // namespace

int sweep_command(const SweepArgs& args) {
  SweepState sweep(args);
  if (auto code = read_options(sweep)) return *code;
  if (auto code = read_scenario(sweep)) return *code;
  if (auto code = describe_plan(sweep)) return *code;
  if (auto code = read_points(sweep)) return *code;
  if (auto code = check_points_differ(sweep)) return *code;
  if (args.out) {
    if (auto bad = prepare_result_dir(*args.out, kSweepFiles, "sweep")) return fail_usage("--out: " + *bad);
  }
  if (auto code = run_sweep(sweep)) return *code;
  return finish(sweep);
}

namespace {

// What the shards of a sweep hold, read one directory at a time.
struct Shards {
  std::optional<SweepPlan> plan;
  std::vector<bool> seen;
  std::vector<SweepRun> runs;
  PooledLatency pooled;

  // Reads the shard in `part` (`first`: the first shard given, to name in a message); an exit
  // status when it cannot be merged.
  std::optional<int> read(const std::string& part, const std::string& first) {
    std::ifstream j(fs::path(part) / "sweep.json");
    if (!j) return fail_usage(part + ": no sweep.json (is it the --out of a sweep?)");
    SweepPlan p;
    try {
      p = SweepPlan::from_json(nlohmann::json::parse(j));
    } catch (const std::exception& e) {
      return fail_usage(part + "/sweep.json: " + e.what());
    }
    if (!plan) {
      plan = p;
      seen.assign(p.shards, false);
    } else if (!SweepPlan::same_sweep(*plan, p)) {
      return fail_usage(part + " is a shard of another sweep than " + first + " (its scenario, grid, seeds or shards differ)");
    }
    if (seen[p.shard - 1]) return fail_usage(part + ": shard " + std::to_string(p.shard) + " is given twice");
    seen[p.shard - 1] = true;
    std::ifstream in(fs::path(part) / "runs.csv");
    try {
      if (pooled.empty() && p.points() <= kMaxPooledPoints) pooled.resize(p.points());
      if (!pooled.empty()) {
        std::ifstream latency(fs::path(part) / "latency.csv");
        if (!latency) return fail_usage(part + ": no latency.csv (a shard of a sweep of an older relaysim?)");
        read_pooled(latency, p, part + "/latency.csv", pooled);
      }
      for (SweepRun& r : read_runs(in, p, part + "/runs.csv")) {
        if (!p.mine(r.run)) return fail_usage(part + "/runs.csv: run " + std::to_string(r.run) + " is not one of its shard's");
        runs.push_back(std::move(r));
      }
    } catch (const std::exception& e) {
      return fail_usage(e.what());
    }
    return std::nullopt;
  }
};

}  // namespace

int merge_command(const MergeArgs& args) {
  if (args.parts.empty()) return fail_usage("merge needs the shards' directories");
  // OUT is written; a shard is read: one directory as both would be overwritten while it is read
  // (`merge p1 p1 p2`, OUT forgotten).
  for (const std::string& part : args.parts) {
    std::error_code ec;
    if (fs::exists(args.out, ec) && fs::equivalent(args.out, part, ec)) {
      return fail_usage("merge OUT PARTS...: " + args.out + " is also given as a shard; the merged table needs a directory of its own");
    }
  }
  Shards shards;
  for (const std::string& part : args.parts) {
    if (const std::optional<int> code = shards.read(part, args.parts.front())) return *code;
  }
  std::optional<SweepPlan>& plan = shards.plan;
  std::vector<SweepRun>& runs = shards.runs;
  RELAYSIM_ASSERT(plan.has_value(), "a sweep's plan from its first shard");
  for (std::uint32_t s = 0; s < plan->shards; ++s) {
    if (!shards.seen[s]) return fail_usage("shard " + std::to_string(s + 1) + "/" + std::to_string(plan->shards) + " is missing");
  }
  std::sort(runs.begin(), runs.end(), [](const SweepRun& a, const SweepRun& b) { return a.run < b.run; });
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].run != i) return fail_usage("run " + std::to_string(i) + " of the sweep is missing or given twice");
  }
  if (runs.size() != plan->runs()) return fail_usage("the shards hold " + std::to_string(runs.size()) + " of the sweep's " + std::to_string(plan->runs()) + " runs");
  const System* system = find_system(plan->system);
  if (system == nullptr) return fail_usage("the sweep's system '" + plan->system + "' is not one this relaysim knows");
  if (auto bad = prepare_result_dir(args.out, kSweepFiles, "sweep")) return fail_usage("merge: " + *bad);
  plan->shard = plan->shards = 1;
  if (auto bad = write_runs(args.out, *plan, runs, shards.pooled)) return fail_incomplete(*bad);
  const std::vector<SweepPoint> table = summarize(*plan, runs, shards.pooled);
  if (auto bad = write_summary(args.out, *plan, table)) return fail_incomplete(*bad);
  std::string problem;
  const std::vector<std::size_t> shown = shown_metrics(*plan, args.show, problem);
  if (!problem.empty()) return fail_usage(problem);
  std::cout << "merged " << args.parts.size() << " shards: " << plan->points() << " points x " << plan->replications
            << " replications\n";
  print_table(std::cout, *plan, *system, table, shown);
  return kExitPass;
}

}  // namespace relaysim::cli
