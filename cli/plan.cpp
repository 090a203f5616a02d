// `relaysim plan`. The search assumes more of the resource never hurts (a monotone answer), and
// decides each probe statistically: a target of a probe is met when its whole 95 % interval lies
// on the right side, failed when it lies wholly on the wrong side, and otherwise undecided — then
// the probe runs more replications, doubling up to --max-replications, as JMT stops at a stated
// precision rather than a fixed count. A probe still undecided counts as not meeting its targets:
// the answer errs towards more resource, and says so.
#include "cli/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/machine.h"
#include "cli/parallel.h"
#include "cli/result_dir.h"
#include "sim/plan/stats.h"
#include "sim/plan/sweep.h"
#include "sim/queueing/erlang.h"
#include "sim/scenario/expect.h"
#include "sim/loader.h"
#include "sim/system.h"

namespace relaysim::cli {

namespace {

using namespace relaysim::sim;


struct Target {
  std::string text;  // as written
  std::string metric;
  std::size_t index = 0;  // in the system's table, or for a group's figure in the group metrics
  double parameter = 0;   // a family's q
  std::size_t group = MetricRef::kNoGroup;  // latency_p99_s[slow]: the group
  Unit unit = Unit::count;
  CompareOp op = CompareOp::lt;
  double value = 0;
  std::optional<double> quantile;  // a latency percentile theory can answer (0.99), or the mean (nullopt, mean)
  bool mean = false;
};

enum class Verdict { meets, fails, undecided };
const char* to_text(Verdict v) { return v == Verdict::meets ? "meets" : v == Verdict::fails ? "fails" : "undecided"; }

struct Probe {
  long long value = 0;
  std::vector<Estimate> estimates;         // per target
  std::uint32_t runs = 0;
  Verdict verdict = Verdict::undecided;
  bool unstable = false;  // offered load at or above capacity: fails whatever the runs showed
};

// A target read like a line of expect: "latency_p99_s < 30s".
std::optional<std::string> parse_target(const Scenario& base, const std::string& text, Target& t) {
  const System& system = *base.system;
  const std::size_t space = text.find_first_of(" <>=!");
  if (space == std::string::npos || space == 0) return "--target: expected METRIC OP VALUE, such as 'latency_p99_s < 30s', got '" + text + "'";
  t.text = text;
  t.metric = text.substr(0, space);
  std::string unknown;
  const auto m = resolve_metric(base, t.metric, unknown);
  if (!m) return "--target " + t.metric + ": " + unknown + " (see relaysim metrics)";
  t.index = m->index;
  t.parameter = m->parameter;
  t.group = m->group;
  t.unit = metric_info(system, *m).unit;
  if (auto problem = parse_comparison(text.substr(space), t.unit, t.op, t.value)) return "--target " + text + ": " + *problem;
  if (t.op == CompareOp::eq || t.op == CompareOp::ne) return "--target " + text + ": a target is a bound: <, <=, > or >=";
  if (t.group != MetricRef::kNoGroup) return std::nullopt;  // theory sees the station whole, not one group of it
  // latency_p50_s, latency_p99_s: a percentile theory can answer, named in the metric itself.
  const std::string_view name = t.metric;
  if (name.starts_with("latency_p") && name.ends_with("_s") && name.size() > 11) {
    const std::string q(name.substr(9, name.size() - 11));
    char* end = nullptr;
    const double v = std::strtod(q.c_str(), &end);
    if (end == q.c_str() + q.size() && v > 0 && v < 100) t.quantile = v / 100;
  }
  if (is_family(system.metrics()[t.index].name) && system.metrics()[t.index].name == "latency_p{q}_s") t.quantile = t.parameter / 100;
  t.mean = t.metric == "latency_mean_s";
  return std::nullopt;
}

bool below(CompareOp op) { return op == CompareOp::lt || op == CompareOp::le; }

// What theory predicts for a target at a station: nothing when it cannot say.
std::optional<double> predicted(const Target& t, const queueing::Station& s) {
  if (!s.stable()) return std::numeric_limits<double>::infinity();
  if (t.mean) return s.mean_sojourn_s();
  if (t.quantile && *t.quantile > 0 && *t.quantile < 1) return s.sojourn_quantile(*t.quantile);
  return std::nullopt;
}

// A latency percentile is read as the upper edge of its histogram bucket (sim/report/histogram.h,
// 16 buckets per power of two): the true value lies up to a bucket below it.
constexpr double kPercentileResolution = 1.0 + 1.0 / 16;

Verdict decide(const Target& t, Estimate e) {
  if (e.n == 0) return Verdict::fails;  // never measurable: nothing delivered
  if (e.n < 2) return Verdict::undecided;
  if (t.quantile) e.ci_low /= kPercentileResolution;
  const bool strict = t.op == CompareOp::lt || t.op == CompareOp::gt;
  if (below(t.op)) {
    if (strict ? e.ci_high < t.value : e.ci_high <= t.value) return Verdict::meets;
    if (strict ? e.ci_low >= t.value : e.ci_low > t.value) return Verdict::fails;
  } else {
    if (strict ? e.ci_low > t.value : e.ci_low >= t.value) return Verdict::meets;
    if (strict ? e.ci_high <= t.value : e.ci_high < t.value) return Verdict::fails;
  }
  return Verdict::undecided;
}

std::string format_estimate(const Target& t, const Estimate& e) {
  if (e.n == 0) return "n/a";
  std::string s = format_value(t.unit, e.mean);
  if (e.n >= 2) s += " ± " + format_value(t.unit == Unit::count ? Unit::number : t.unit, e.half_width());
  // Every run's percentile in one histogram bucket: the spread is below what a bucket resolves.
  if (t.quantile && e.n >= 2 && e.half_width() < e.mean * (kPercentileResolution - 1)) s += " (to a bucket, 6%)";
  return s;
}

std::optional<std::uint32_t> count_arg(const std::optional<std::string>& text, std::uint32_t fallback, std::uint32_t lo, std::uint32_t hi) {
  if (!text) return fallback;
  const auto n = parse_u64(*text);
  if (!n || *n < lo || *n > hi) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

}  // namespace

namespace {
// Ctrl-C stopped a probe's runs: the plan has no answer to give.
struct Interrupted {};
}  // namespace

int plan_command(const PlanArgs& args) {
  const auto reps0 = count_arg(args.replications, 5, 2, 10'000);
  if (!reps0) return fail_usage("--replications: expected a whole number from 2 to 10000");
  const auto reps_max = count_arg(args.max_replications, std::max<std::uint32_t>(*reps0, 40), *reps0, 100'000);
  if (!reps_max) return fail_usage("--max-replications: expected a whole number from --replications to 100000");
  const auto jobs = count_arg(args.jobs, std::max(1u, std::thread::hardware_concurrency()), 1, 4096);
  if (!jobs) return fail_usage("--jobs: expected a whole number from 1 to 4096");
  std::string memory_problem;
  const std::optional<double> memory_limit = memory_limit_of(args.memory_limit, memory_problem);
  if (!memory_limit) return fail_usage(memory_problem);
  if (args.targets.empty()) return fail_usage("plan needs at least one --target, such as --target 'latency_p99_s < 30s'");
  if (args.json_path && *args.json_path != "-") {
    if (auto bad = check_writable(*args.json_path, "--json")) return fail_usage(*bad);
  }

  std::vector<Override> sets;
  Scenario base;
  Axis range;
  ScenarioText file;
  try {
    file = read_scenario_file(args.file);
    for (const std::string& s : args.sets) sets.push_back(parse_override(s));
    base = parse_scenario(file.text, file.name, sets);
    range = parse_axis(args.resource + "=" + args.range.value_or("1..1024"), "--range");
  } catch (const ScenarioError& e) {
    std::cerr << "relaysim: invalid plan: " << e.what() << "\n";
    return kExitInvalid;
  }
  if (args.range && args.range->find("..") == std::string::npos) return fail_usage("--range: expected FROM..TO, such as 1..64");
  if (args.seed) {
    const auto seed = parse_u64(*args.seed);
    if (!seed) return fail_usage("--seed: expected a whole number from 0 to 18446744073709551615");
    base.seed = *seed;
  }
  const System& system = *base.system;
  std::vector<Target> targets(args.targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (auto problem = parse_target(base, args.targets[i], targets[i])) return fail_usage(*problem);
  }

  // The scenario at each value of the resource, read when first needed (a value the scenario
  // refuses, such as 0 pods, ends the plan with the reader's error).
  std::map<std::size_t, Scenario> at;
  const auto scenario_at = [&](std::size_t i) -> const Scenario& {
    auto it = at.find(i);
    if (it == at.end()) {
      std::vector<Override> o = sets;
      o.push_back({args.resource, range.values[i], "--range"});
      Scenario s = parse_scenario(file.text, file.name, o);
      s.seed = base.seed;
      it = at.emplace(i, std::move(s)).first;
    }
    return it->second;
  };

  // Theory first: the least value at which every target theory can speak to is predicted met.
  std::optional<std::size_t> analytic;
  std::optional<queueing::Station> analytic_station;
  bool theory_speaks = false;
  try {
    for (std::size_t i = 0; i < range.values.size(); ++i) {
      const auto st = system.station(scenario_at(i));
      if (!st) break;
      bool meets = true;
      for (const Target& t : targets) {
        const auto p = predicted(t, *st);
        if (!p) continue;
        theory_speaks = true;
        const bool ok = below(t.op) ? (t.op == CompareOp::lt ? *p < t.value : *p <= t.value)
                                    : (t.op == CompareOp::gt ? *p > t.value : *p >= t.value);
        meets = meets && ok;
      }
      if (!theory_speaks) break;
      if (meets) {
        analytic = i;
        analytic_station = st;
        break;
      }
    }
  } catch (const ScenarioError& e) {
    std::cerr << "relaysim: invalid plan: " << e.what() << "\n";
    return kExitInvalid;
  }

  // Then simulation: probes, each decided with confidence.
  std::vector<MetricRef> refs;
  for (const Target& t : targets) refs.push_back({t.index, t.parameter, t.group});
  std::map<std::size_t, Probe> probes;
  std::vector<std::size_t> order;  // probes in the order they ran
  const auto probe = [&](std::size_t i) -> Verdict {
    if (auto it = probes.find(i); it != probes.end()) return it->second.verdict;
    Probe p;
    p.value = std::stoll(range.values[i]);
    const Scenario& s = scenario_at(i);
    // A queue whose load is at or above its capacity fails however a finite run looks: its
    // backlog grows without bound, only slowly at first. Theory's word on stability is final,
    // and no run is spent on it.
    if (const auto st = system.station(s); st && !st->stable()) {
      p.verdict = Verdict::fails;
      p.unstable = true;
      p.estimates.assign(targets.size(), Estimate{0, std::nan(""), std::nan(""), std::nan(""), std::nan(""), std::nan(""), std::nan("")});
    }
    std::vector<RunOutcome> outcomes;
    for (std::uint32_t reps = *reps0; !p.unstable; reps = std::min(*reps_max, reps * 2)) {
      std::vector<RunJob> jobs_of;
      for (std::uint32_t r = static_cast<std::uint32_t>(outcomes.size()); r < reps; ++r) jobs_of.push_back({&s, base.seed + r});
      const std::string what = args.resource + "=" + range.values[i];
      // (A probe too big for memory stops the plan: the answer would be a guess.)
      const unsigned threads = runs_at_once(jobs_of, *jobs, *memory_limit, args.quiet || !outcomes.empty(), what);
      for (RunOutcome& o : run_parallel(jobs_of, threads, args.quiet, what, refs)) {
        outcomes.push_back(std::move(o));
      }
      if (stop_requested()) throw Interrupted{};
      p.runs = reps;
      p.estimates.clear();
      p.verdict = Verdict::meets;
      for (const Target& t : targets) {
        std::vector<double> v;
        for (const RunOutcome& o : outcomes) v.push_back(o.targets[&t - targets.data()]);
        p.estimates.push_back(estimate(v));
        const Verdict d = decide(t, p.estimates.back());
        if (d == Verdict::fails) p.verdict = Verdict::fails;
        if (d == Verdict::undecided && p.verdict == Verdict::meets) p.verdict = Verdict::undecided;
      }
      if (p.verdict != Verdict::undecided || reps >= *reps_max) break;
    }
    probes[i] = p;
    order.push_back(i);
    if (!args.quiet) {
      std::cerr << "  " << args.resource << " = " << range.values[i] << ": " << to_text(p.verdict)
                << (p.unstable ? " (unstable: arrivals at or above capacity; not run)" : "") << " after " << p.runs << " runs";
      for (std::size_t t = 0; t < targets.size(); ++t) std::cerr << "; " << targets[t].metric << " " << format_estimate(targets[t], p.estimates[t]);
      std::cerr << "\n";
    }
    return p.verdict;
  };

  std::optional<std::size_t> answer;
  try {
    // The least index that meets: start where theory points, then bisect.
    std::size_t lo = 0, hi = range.values.size() - 1;
    if (analytic) {
      if (probe(*analytic) == Verdict::meets) {
        hi = *analytic;
        answer = *analytic;
        // Theory is usually right or close: one below it first, before bisecting the rest.
        if (*analytic > 0 && probe(*analytic - 1) != Verdict::meets) lo = *analytic;
      } else {
        lo = *analytic + 1;
      }
    }
    if (!answer) {
      // Gallop up from lo so a small answer is found without probing the top of a wide range.
      std::size_t step = 1, probe_at = lo;
      while (true) {
        probe_at = std::min(hi, lo + step - 1);
        if (probe(probe_at) == Verdict::meets) {
          answer = probe_at;
          hi = probe_at;
          break;
        }
        if (probe_at == hi) break;
        lo = probe_at + 1;
        step *= 2;
      }
    }
    if (answer) {
      while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (probe(mid) == Verdict::meets) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      answer = hi;
      if (*answer > 0) probe(*answer - 1);  // what one less gives, for the report
    }
  } catch (const ScenarioError& e) {
    std::cerr << "relaysim: invalid plan: " << e.what() << "\n";
    return kExitInvalid;
  } catch (const Interrupted&) {
    std::cerr << "relaysim: plan interrupted after " << order.size() << (order.size() == 1 ? " probe" : " probes") << "; no answer\n";
    return kExitInterrupted;
  } catch (const std::exception& e) {
    std::cerr << "relaysim: the plan stopped: " << e.what() << "\n";
    return kExitIncomplete;
  }

  // The report.
  std::ostream& out = args.json_path && *args.json_path == "-" ? std::cerr : std::cout;
  std::string targets_text;
  for (const Target& t : targets) targets_text += (targets_text.empty() ? "" : " and ") + t.text;
  out << "plan: the least " << args.resource << " in " << range.values.front() << ".." << range.values.back() << " for "
      << targets_text << "\n";
  if (answer) {
    const Probe& p = probes.at(*answer);
    out << "  simulated: " << range.values[*answer] << "  (every target met with 95% confidence over " << p.runs << " runs";
    for (std::size_t t = 0; t < targets.size(); ++t) out << "; " << targets[t].metric << " " << format_estimate(targets[t], p.estimates[t]);
    out << ")\n";
    if (*answer > 0) {
      const Probe& below_p = probes.at(*answer - 1);
      out << "             at " << range.values[*answer - 1] << ": " << to_text(below_p.verdict)
          << (below_p.unstable ? " (unstable: arrivals at or above capacity)" : "") << " over " << below_p.runs << " runs";
      for (std::size_t t = 0; t < targets.size(); ++t) out << "; " << targets[t].metric << " " << format_estimate(targets[t], below_p.estimates[t]);
      out << (below_p.verdict == Verdict::undecided ? "  (not shown to fail: the answer may be one too high)" : "") << "\n";
    } else {
      out << "             (the least value of the range)\n";
    }
  } else {
    out << "  simulated: no value in the range meets every target with 95% confidence\n";
  }
  if (analytic && analytic_station) {
    const queueing::Station& st = *analytic_station;
    char line[512];
    std::snprintf(line, sizeof line,
                  "  theory:    %s  (%s: lambda %.4g/s, E[S] %.4gs, cs2 %.3g, %u servers, utilisation %.1f%%, P(wait) %.3g)\n",
                  range.values[*analytic].c_str(), st.ca2 == 1 && st.cs2 == 1 ? "Erlang C, M/M/c" : "Allen-Cunneen, G/G/c",
                  st.lambda, st.mean_s, st.cs2, st.c, 100 * st.utilisation(), st.p_wait());
    out << line;
    if (answer) {
      const long long diff = std::stoll(range.values[*answer]) - std::stoll(range.values[*analytic]);
      out << "             " << (diff == 0 ? "agrees with the simulation" : "the simulation needs " + std::to_string(diff) + " more") << "\n";
    }
  } else {
    out << "  theory:    " << (theory_speaks ? "no value in the range" : "has nothing to say about these targets for this system") << "\n";
  }
  if (args.json_path) {
    nlohmann::json j;
    j["resource"] = args.resource;
    j["targets"] = args.targets;
    j["answer"] = answer ? nlohmann::json(std::stoll(range.values[*answer])) : nlohmann::json(nullptr);
    j["theory"] = analytic ? nlohmann::json(std::stoll(range.values[*analytic])) : nlohmann::json(nullptr);
    j["confidence"] = 0.95;
    for (std::size_t i : order) {
      const Probe& p = probes.at(i);
      nlohmann::json jp{{"value", p.value}, {"runs", p.runs}, {"verdict", to_text(p.verdict)}};
      for (std::size_t t = 0; t < targets.size(); ++t) {
        const Estimate& e = p.estimates[t];
        const auto num = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
        jp["targets"][targets[t].text] = {{"mean", num(e.mean)}, {"ci95", {num(e.ci_low), num(e.ci_high)}}, {"n", e.n}};
      }
      j["probes"].push_back(jp);
    }
    if (*args.json_path == "-") {
      std::cout << j.dump(2) << "\n";
    } else if (auto bad = write_text(*args.json_path, j.dump(2) + "\n")) {
      return fail_incomplete(*bad);
    }
  }
  return answer ? kExitPass : kExitFail;
}

}  // namespace relaysim::cli
