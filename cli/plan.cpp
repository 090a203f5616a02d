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
#include "live/machine.h"
#include "live/parallel.h"
#include "cli/result_dir.h"
#include "model/core/assert.h"
#include "model/core/text.h"
#include "sim/plan/stats.h"
#include "sim/plan/sweep.h"
#include "sim/queueing/erlang.h"
#include "sim/scenario/expect.h"
#include "sim/loader.h"
#include "sim/run.h"
#include "sim/system.h"
#include "sim/report/stamp.h"

namespace relaysim::cli {

using live::RunJob;
using live::RunOutcome;
using live::memory_limit_of;
using live::run_parallel;
using live::runs_at_once;
using live::stop_requested;

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
  // What theory can answer: a percentile (0.99) or the mean of the sojourn or of the wait.
  enum class Measure { none, sojourn, wait } measure = Measure::none;
  std::optional<double> quantile;
  bool mean = false;
  // A percentile of the whole run's latency: read from every run's durations pooled, with the
  // sectioning interval, as sweep reads its tails (sim/plan/stats.h), not as a mean of the runs'
  // own percentiles: a planner's "p99 < 30 s" is about every request.
  bool pooled_tail = false;
};

enum class Verdict { meets, fails, undecided };
const char* to_text(Verdict v) { return v == Verdict::meets ? "meets" : v == Verdict::fails ? "fails" : "undecided"; }

struct Probe {
  long long value = 0;
  LatencyHistogram pooled;                 // every run's latency, for the pooled tails
  std::vector<Estimate> estimates;         // per target
  std::vector<Verdict> verdicts;           // per target: what its estimate decided
  std::uint32_t runs = 0;
  Verdict verdict = Verdict::undecided;
  bool unstable = false;  // offered load at or above capacity: fails whatever the runs showed
};

// A target read like a line of expect: "latency_p99_s < 30s".
std::optional<std::string> parse_target(const Scenario& base, const std::string& text, Target& t) {
  RELAYSIM_ASSERT(base.system != nullptr, "a scenario names its system");
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
  // latency_p99_s, latency_mean_s, wait_p80_s, wait_mean_s: what theory can answer of the sojourn
  // or of the wait, a percentile named in the metric itself or in its family's parameter.
  const std::string_view name = t.metric;
  for (const auto& [prefix, measure] : {std::pair{std::string_view("latency_"), Target::Measure::sojourn}, std::pair{std::string_view("wait_"), Target::Measure::wait}}) {
    if (!name.starts_with(prefix)) continue;
    const std::string_view rest = name.substr(prefix.size());
    if (rest == "mean_s") {
      t.measure = measure;
      t.mean = true;
    } else if (rest.starts_with("p") && rest.ends_with("_s") && rest.size() > 3) {
      const std::string q(rest.substr(1, rest.size() - 3));
      char* end = nullptr;
      const double v = std::strtod(q.c_str(), &end);
      const bool family = is_family(system.metrics()[t.index].name);
      const double percent = family ? t.parameter : (end == q.c_str() + q.size() ? v : 0);
      if (percent > 0 && percent < 100) {
        t.measure = measure;
        t.quantile = percent / 100;
      }
    }
  }
  // The latency every run pools (sim/report/groups.h) is what latency_p{q}_s is read from.
  t.pooled_tail = t.measure == Target::Measure::sojourn && t.quantile.has_value();
  return std::nullopt;
}

bool below(CompareOp op) { return op == CompareOp::lt || op == CompareOp::le; }

// What theory predicts for a target at a station: nothing when it cannot say.
std::optional<double> predicted(const Target& t, const queueing::Station& s) {
  if (s.bursty && t.measure != Target::Measure::none) return std::nullopt;  // no closed form for the waits of arrivals in spells
  if (!s.stable()) return std::numeric_limits<double>::infinity();
  const bool wait = t.measure == Target::Measure::wait;
  if (t.mean) return wait ? s.mean_wait_s() : s.mean_sojourn_s();
  if (t.quantile) return wait ? s.wait_quantile(*t.quantile) : s.sojourn_quantile(*t.quantile);
  return std::nullopt;
}

// A latency percentile is read inside its histogram bucket (sim/report/histogram.h): the true
// value lies within a bucket of it, either way.
constexpr double kPercentileResolution = 1.0 + LatencyHistogram::kResolution;

Verdict decide(const Target& t, Estimate e) {
  if (e.n == 0) return Verdict::fails;  // never measurable: nothing delivered
  if (e.n < 2) return Verdict::undecided;
  // A mean of the runs' percentiles is widened by the bucket the percentiles were read in; a
  // pooled tail's interval is at least a bucket wide on each side already.
  if (t.quantile && !t.pooled_tail) {
    e.ci_low /= kPercentileResolution;
    e.ci_high *= kPercentileResolution;
  }
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
  if (t.quantile && e.n >= 2 && e.half_width() < e.mean * (kPercentileResolution - 1)) {
    s += " (to a bucket, " + fmt("%.2g", LatencyHistogram::kResolution * 100) + "%)";
  }
  return s;
}

std::optional<std::uint32_t> count_arg(const std::optional<std::string>& text, std::uint32_t fallback, std::uint32_t lo, std::uint32_t hi) {
  RELAYSIM_ASSERT(lo <= hi, "a range's low end is not above its high end");
  if (!text) return fallback;
  const auto n = parse_u64(*text);
  if (!n || *n < lo || *n > hi) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

}  // namespace

namespace {
// Ctrl-C stopped a probe's runs: the plan has no answer to give.
struct Interrupted {};

// What the steps of a plan share: the options read, the scenario at each value of the resource,
// what theory predicts, and the probes run.
struct PlanState {
  explicit PlanState(const PlanArgs& plan_args) : args(plan_args) {}

  const PlanArgs& args;
  std::uint32_t first_replications = 0;
  std::uint32_t max_replications = 0;
  std::uint32_t jobs = 0;
  double memory_limit = 0;
  std::vector<Override> sets;
  Scenario base;
  Axis range;
  ScenarioText file;
  std::vector<Target> targets;
  std::map<std::size_t, Scenario> at;  // the scenario at each value of the resource read so far
  std::optional<std::size_t> analytic;
  std::optional<queueing::Station> analytic_station;
  // What theory can say of the targets, the strongest word found: nothing; that it has no
  // closed form (it would answer, but the arrivals come in spells); or an answer.
  enum class Theory { silent, no_closed_form, speaks } theory = Theory::silent;
  std::vector<MetricRef> refs;
  std::map<std::size_t, Probe> probes;
  std::vector<std::size_t> order;  // probes in the order they ran
  std::optional<std::size_t> answer;
};

// Each step returns an exit code when the plan ends there, nothing when it goes on.

std::optional<int> read_options(PlanState& plan) {
  const PlanArgs& args = plan.args;
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
  plan.first_replications = *reps0;
  plan.max_replications = *reps_max;
  plan.jobs = *jobs;
  plan.memory_limit = *memory_limit;
  return std::nullopt;
}

std::optional<int> read_scenario(PlanState& plan) {
  const PlanArgs& args = plan.args;
  try {
    plan.file = read_scenario_file(args.file);
    for (const std::string& s : args.sets) plan.sets.push_back(parse_override(s));
    plan.base = parse_scenario(plan.file.text, plan.file.name, plan.sets);
    plan.range = parse_axis(args.resource + "=" + args.range.value_or("1..1024"), "--range");
  } catch (const ScenarioError& e) {
    std::cerr << "relaysim: invalid plan: " << e.what() << "\n";
    return kExitInvalid;
  }
  if (args.range && args.range->find("..") == std::string::npos) return fail_usage("--range: expected FROM..TO, such as 1..64");
  if (args.seed) {
    const auto seed = parse_u64(*args.seed);
    if (!seed) return fail_usage("--seed: expected a whole number from 0 to 18446744073709551615");
    plan.base.seed = *seed;
  }
  plan.targets.resize(args.targets.size());
  for (std::size_t i = 0; i < plan.targets.size(); ++i) {
    if (auto problem = parse_target(plan.base, args.targets[i], plan.targets[i])) return fail_usage(*problem);
  }
  return std::nullopt;
}

// The scenario at each value of the resource, read when first needed (a value the scenario
// refuses, such as 0 pods, ends the plan with the reader's error).
const Scenario& scenario_at(PlanState& plan, std::size_t i) {
  RELAYSIM_ASSERT(i < plan.range.values.size(), "a value of the range");
  auto it = plan.at.find(i);
  if (it == plan.at.end()) {
    std::vector<Override> o = plan.sets;
    o.push_back({plan.args.resource, plan.range.values[i], "--range"});
    Scenario s = parse_scenario(plan.file.text, plan.file.name, o);
    s.seed = plan.base.seed;
    it = plan.at.emplace(i, std::move(s)).first;
  }
  return it->second;
}

// Theory first: the least value at which every target theory can speak to is predicted met.
std::optional<int> consult_theory(PlanState& plan) {
  const System& system = *plan.base.system;
  try {
    for (std::size_t i = 0; i < plan.range.values.size(); ++i) {
      const auto st = system.station(scenario_at(plan, i));
      if (!st) break;
      bool meets = true;
      for (const Target& t : plan.targets) {
        if (st->bursty && t.measure != Target::Measure::none) plan.theory = std::max(plan.theory, PlanState::Theory::no_closed_form);
        const auto p = predicted(t, *st);
        if (!p) continue;
        plan.theory = PlanState::Theory::speaks;
        const bool ok = below(t.op) ? (t.op == CompareOp::lt ? *p < t.value : *p <= t.value)
                                    : (t.op == CompareOp::gt ? *p > t.value : *p >= t.value);
        meets = meets && ok;
      }
      if (plan.theory != PlanState::Theory::speaks) break;
      if (meets) {
        plan.analytic = i;
        plan.analytic_station = st;
        break;
      }
    }
  } catch (const ScenarioError& e) {
    std::cerr << "relaysim: invalid plan: " << e.what() << "\n";
    return kExitInvalid;
  }
  return std::nullopt;
}

// Runs a probe's replications, doubling them up to --max-replications while it is undecided.
void replicate(PlanState& plan, std::size_t i, const Scenario& s, Probe& p) {
  const PlanArgs& args = plan.args;
  const std::vector<Target>& targets = plan.targets;
  RELAYSIM_ASSERT(plan.first_replications >= 1 && plan.max_replications >= plan.first_replications,
                  "a probe runs at least once, and may run more");
  std::vector<RunOutcome> outcomes;
  for (std::uint32_t reps = plan.first_replications; !p.unstable; reps = std::min(plan.max_replications, reps * 2)) {
    std::vector<RunJob> jobs_of;
    for (std::uint32_t r = static_cast<std::uint32_t>(outcomes.size()); r < reps; ++r) jobs_of.push_back({&s, plan.base.seed + r});
    const std::string what = args.resource + "=" + plan.range.values[i];
    // (A probe too big for memory stops the plan: the answer would be a guess.)
    const unsigned threads = runs_at_once(jobs_of, plan.jobs, plan.memory_limit, args.quiet || !outcomes.empty(), what);
    const live::EachRun pool = [&p](std::size_t, const RunResult& r) { p.pooled.merge(r.groups.all().latency); };
    for (RunOutcome& o : run_parallel(jobs_of, threads, args.quiet, what, plan.refs, pool)) {
      outcomes.push_back(std::move(o));
    }
    if (stop_requested()) throw Interrupted{};
    p.runs = reps;
    p.estimates.clear();
    p.verdicts.clear();
    p.verdict = Verdict::meets;
    for (const Target& t : targets) {
      std::vector<double> v;
      for (const RunOutcome& o : outcomes) {
        RELAYSIM_ASSERT(o.targets.size() == targets.size(), "a run measures every target");
        v.push_back(o.targets[&t - targets.data()]);
      }
      p.estimates.push_back(estimate(v));
      Verdict d = Verdict::undecided;
      if (t.pooled_tail) {
        // The pooled quantile and its sectioning interval stand for the mean and its interval.
        const TailEstimate tail = tail_estimate(p.pooled, v, *t.quantile);
        Estimate& e = p.estimates.back();
        e.mean = tail.value;
        e.ci_low = tail.ci_low;
        e.ci_high = tail.ci_high;
        // Fewer than ten durations beyond the quantile: a guess, decided by more runs.
        if (tail.enough()) d = decide(t, e);
      } else {
        d = decide(t, p.estimates.back());
      }
      p.verdicts.push_back(d);
      if (d == Verdict::fails) p.verdict = Verdict::fails;
      if (d == Verdict::undecided && p.verdict == Verdict::meets) p.verdict = Verdict::undecided;
    }
    if (p.verdict != Verdict::undecided || reps >= plan.max_replications) break;
  }
}

// Then simulation: probes, each decided with confidence.
Verdict probe(PlanState& plan, std::size_t i) {
  const PlanArgs& args = plan.args;
  const std::vector<Target>& targets = plan.targets;
  RELAYSIM_ASSERT(i < plan.range.values.size(), "a value of the range");
  if (auto it = plan.probes.find(i); it != plan.probes.end()) return it->second.verdict;
  Probe p;
  p.value = std::stoll(plan.range.values[i]);
  const Scenario& s = scenario_at(plan, i);
  // A queue whose load is at or above its capacity fails however a finite run looks: its
  // backlog grows without bound, only slowly at first. Theory's word on stability is final,
  // and no run is spent on it.
  if (const auto st = plan.base.system->station(s); st && !st->stable()) {
    p.verdict = Verdict::fails;
    p.unstable = true;
    p.estimates.assign(targets.size(), Estimate{0, std::nan(""), std::nan(""), std::nan(""), std::nan(""), std::nan(""), std::nan("")});
    p.verdicts.assign(targets.size(), Verdict::fails);
  }
  replicate(plan, i, s, p);
  plan.probes[i] = p;
  plan.order.push_back(i);
  if (!args.quiet) {
    std::cerr << "  " << args.resource << " = " << plan.range.values[i] << ": " << to_text(p.verdict)
              << (p.unstable ? " (unstable: arrivals at or above capacity; not run)" : "") << " after " << p.runs << " runs";
    for (std::size_t t = 0; t < targets.size(); ++t) std::cerr << "; " << targets[t].metric << " " << format_estimate(targets[t], p.estimates[t]);
    std::cerr << "\n";
  }
  return p.verdict;
}

// The least index that meets: start where theory points, then bisect.
void search(PlanState& plan) {
  std::optional<std::size_t>& answer = plan.answer;
  const std::optional<std::size_t>& analytic = plan.analytic;
  RELAYSIM_ASSERT(!plan.range.values.empty(), "a range has a value");
  std::size_t lo = 0, hi = plan.range.values.size() - 1;
  if (analytic) {
    if (probe(plan, *analytic) == Verdict::meets) {
      hi = *analytic;
      answer = *analytic;
      // Theory is usually right or close: one below it first, before bisecting the rest.
      if (*analytic > 0 && probe(plan, *analytic - 1) != Verdict::meets) lo = *analytic;
    } else {
      lo = *analytic + 1;
    }
  }
  if (!answer) {
    // Gallop up from lo so a small answer is found without probing the top of a wide range.
    std::size_t step = 1, probe_at = lo;
    while (true) {
      probe_at = std::min(hi, lo + step - 1);
      if (probe(plan, probe_at) == Verdict::meets) {
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
      if (probe(plan, mid) == Verdict::meets) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    answer = hi;
    if (*answer > 0) probe(plan, *answer - 1);  // what one less gives, for the report
  }
}

std::optional<int> find_answer(PlanState& plan) {
  for (const Target& t : plan.targets) plan.refs.push_back({t.index, t.parameter, t.group});
  try {
    search(plan);
  } catch (const ScenarioError& e) {
    std::cerr << "relaysim: invalid plan: " << e.what() << "\n";
    return kExitInvalid;
  } catch (const Interrupted&) {
    std::cerr << "relaysim: plan interrupted after " << plan.order.size() << (plan.order.size() == 1 ? " probe" : " probes") << "; no answer\n";
    return kExitInterrupted;
  } catch (const std::exception& e) {
    std::cerr << "relaysim: the plan stopped: " << e.what() << "\n";
    return kExitIncomplete;
  }
  return std::nullopt;
}

// No value met the targets: why, target by target, at the most of the resource tried. A figure
// that barely moved from the least tried to the most (by under a tenth) is held by something
// more of this resource cannot change, as a p99 cannot fall below a 45-minute outage: say so
// rather than let the user widen the range in vain.
void explain_no_answer(const PlanState& plan, std::ostream& out) {
  if (plan.order.empty()) return;
  const std::vector<std::string>& values = plan.range.values;
  const std::size_t least = *std::min_element(plan.order.begin(), plan.order.end());
  const std::size_t most = *std::max_element(plan.order.begin(), plan.order.end());
  const Probe& top = plan.probes.at(most);
  const Probe& bottom = plan.probes.at(least);
  if (top.unstable) {
    out << "  why:       even at " << values[most] << " the offered load is at or above capacity; widen the range\n";
    return;
  }
  for (std::size_t t = 0; t < plan.targets.size(); ++t) {
    const Target& target = plan.targets[t];
    const Estimate& e = top.estimates[t];
    const Verdict v = top.verdicts[t];  // as the probe decided it (a pooled tail with too few beyond it: undecided)
    if (v == Verdict::meets) continue;
    out << "  why:       at " << values[most] << ", the most tried, " << target.metric << " is " << format_estimate(target, e);
    if (v == Verdict::undecided) {
      out << ": too close to " << target.text << " to decide in " << top.runs << " runs (raise --max-replications)\n";
      continue;
    }
    out << ", against " << target.text;
    const Estimate& b = bottom.estimates[t];
    if (least != most && !bottom.unstable && e.n > 0 && b.n > 0 && std::isfinite(e.mean) && std::isfinite(b.mean) &&
        std::abs(e.mean - b.mean) <= 0.1 * std::max(std::abs(e.mean), std::abs(b.mean))) {
      out << "; it was " << format_estimate(target, b) << " at " << values[least] << ". It hardly moves with "
          << plan.args.resource << ", so no value of it will do: what holds it there is elsewhere (a fault window, a "
             "dependency's latency or outage, a deadline)";
    }
    out << "\n";
  }
}

// The report: what the simulation found.
void print_simulated(const PlanState& plan, std::ostream& out) {
  const std::vector<Target>& targets = plan.targets;
  const std::vector<std::string>& values = plan.range.values;
  const std::optional<std::size_t>& answer = plan.answer;
  std::string targets_text;
  for (const Target& t : targets) targets_text += (targets_text.empty() ? "" : " and ") + t.text;
  out << "plan: the least " << plan.args.resource << " in " << values.front() << ".." << values.back() << " for "
      << targets_text << "\n";
  if (answer) {
    const Probe& p = plan.probes.at(*answer);
    out << "  simulated: " << values[*answer] << "  (every target met with 95% confidence over " << p.runs << " runs";
    for (std::size_t t = 0; t < targets.size(); ++t) out << "; " << targets[t].metric << " " << format_estimate(targets[t], p.estimates[t]);
    out << ")\n";
    if (*answer > 0) {
      const Probe& below_p = plan.probes.at(*answer - 1);
      out << "             at " << values[*answer - 1] << ": " << to_text(below_p.verdict)
          << (below_p.unstable ? " (unstable: arrivals at or above capacity)" : "") << " over " << below_p.runs << " runs";
      for (std::size_t t = 0; t < targets.size(); ++t) out << "; " << targets[t].metric << " " << format_estimate(targets[t], below_p.estimates[t]);
      out << (below_p.verdict == Verdict::undecided ? "  (not shown to fail: the answer may be one too high)" : "") << "\n";
    } else {
      out << "             (the least value of the range)\n";
    }
  } else {
    out << "  simulated: no value in the range meets every target with 95% confidence\n";
    explain_no_answer(plan, out);
  }
}

// The report: what theory predicted, and how it compares.
void print_theory(const PlanState& plan, std::ostream& out) {
  const std::vector<std::string>& values = plan.range.values;
  const std::optional<std::size_t>& analytic = plan.analytic;
  if (analytic && plan.analytic_station) {
    const queueing::Station& st = *plan.analytic_station;
    char line[512];
    std::snprintf(line, sizeof line,
                  "  theory:    %s  (%s: lambda %.4g/s, E[S] %.4gs, cs2 %.3g, %u servers, utilisation %.1f%%, P(wait) %.3g)\n",
                  values[*analytic].c_str(), st.ca2 == 1 && st.cs2 == 1 ? "Erlang C, M/M/c" : "Allen-Cunneen, G/G/c",
                  st.lambda, st.mean_s, st.cs2, st.c, 100 * st.utilisation(), st.p_wait());
    out << line;
    if (plan.answer) {
      const long long diff = std::stoll(values[*plan.answer]) - std::stoll(values[*analytic]);
      out << "             " << (diff == 0 ? "agrees with the simulation" : "the simulation needs " + std::to_string(diff) + " more") << "\n";
    }
  } else {
    const char* word = "has nothing to say about these targets for this system";
    if (plan.theory == PlanState::Theory::speaks) word = "no value in the range";
    if (plan.theory == PlanState::Theory::no_closed_form) {
      word = "no closed form for arrivals in spells (arrival: bursty): the waits depend on a spell's length against how fast the "
             "queue empties, and Kingman's formula with the spells' index of dispersion can be an order of magnitude off";
    }
    out << "  theory:    " << word << "\n";
  }
}

std::optional<int> write_json(const PlanState& plan, const std::string& json_path) {
  const std::vector<Target>& targets = plan.targets;
  const std::vector<std::string>& values = plan.range.values;
  nlohmann::json j;
  stamp(j, kPlanSchema);
  j["resource"] = plan.args.resource;
  j["targets"] = plan.args.targets;
  j["answer"] = plan.answer ? nlohmann::json(std::stoll(values[*plan.answer])) : nlohmann::json(nullptr);
  j["theory"] = plan.analytic ? nlohmann::json(std::stoll(values[*plan.analytic])) : nlohmann::json(nullptr);
  j["confidence"] = 0.95;
  for (std::size_t i : plan.order) {
    const Probe& p = plan.probes.at(i);
    RELAYSIM_ASSERT(p.estimates.size() == targets.size(), "a probe has an estimate per target");
    nlohmann::json jp{{"value", p.value}, {"runs", p.runs}, {"verdict", to_text(p.verdict)}};
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const Estimate& e = p.estimates[t];
      const auto num = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
      jp["targets"][targets[t].text] = {{"mean", num(e.mean)}, {"ci95", {num(e.ci_low), num(e.ci_high)}}, {"n", e.n}};
    }
    j["probes"].push_back(jp);
  }
  if (json_path == "-") {
    std::cout << j.dump(2) << "\n";
  } else if (auto bad = write_text(json_path, j.dump(2) + "\n")) {
    return fail_incomplete(*bad);
  }
  return std::nullopt;
}

}  // namespace

int plan_command(const PlanArgs& args) {
  PlanState plan(args);
  if (auto code = read_options(plan)) return *code;
  if (auto code = read_scenario(plan)) return *code;
  if (auto code = consult_theory(plan)) return *code;
  if (auto code = find_answer(plan)) return *code;
  std::ostream& out = args.json_path && *args.json_path == "-" ? std::cerr : std::cout;
  print_simulated(plan, out);
  print_theory(plan, out);
  if (args.json_path) {
    if (auto code = write_json(plan, *args.json_path)) return *code;
  }
  return plan.answer ? kExitPass : kExitFail;
}

}  // namespace relaysim::cli
