// System: what each system relaysim simulates (the webhook platform, the SMS gateway, the
// transactional outbox relay) gives the generic spine.
//
// The spine — the kernel, the scenario's top level, the run loop (sim/run.h), the ledger of
// invariants, the metric tables, the summary and the JSON — knows systems only through this
// interface. A system reads and writes its section of a scenario (and documents it), names its
// metrics, invariants and planted bugs, estimates what a scenario will cost, and builds its world
// for one run: its pods (sim/world/process.h), its simulated dependencies, its load, its oracle.
// sim/systems.cpp is the one place that lists the systems.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <yaml-cpp/yaml.h>

#include <deque>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/fingerprint.h"
#include "model/core/lifecycle.h"
#include "model/core/mutants.h"
#include "sim/kernel/kernel.h"
#include "sim/oracle/ledger.h"
#include "sim/queueing/erlang.h"
#include "sim/report/groups.h"
#include "sim/report/metric.h"
#include "sim/report/run_metrics.h"
#include "sim/report/series.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/schema.h"
#include "sim/scenario/yaml_reader.h"

namespace relaysim::sim {

// What a scenario will cost, estimated before it runs.
struct Footprint {
  // One thing the run holds in memory, in the system's terms.
  struct Part {
    double bytes = 0;    // roughly
    std::string what;    // "1200 requests held at once"
    std::string advice;  // how to make it smaller: "lower webhook.platform.pods"
  };
  double calls = 0;         // client calls the load makes
  // Firings of the system's own timers over the run, whatever the load (an outbox's scans,
  // renewals, rescues and polls): a long run makes many without a single call.
  double timer_firings = 0;
  std::string timers_advice;  // how to make them fewer
  std::vector<Part> parts;  // what the memory goes to

  double bytes() const {
    double sum = 0;
    for (const Part& p : parts) sum += p.bytes;
    return sum;
  }
  // The part that costs the most (a default Part when there are none).
  Part largest() const {
    Part most;
    for (const Part& p : parts) {
      if (p.bytes > most.bytes) most = p;
    }
    return most;
  }
};

// What one run of a system leaves behind for the summary, the JSON and `expect:`.
class SystemReport {
 public:
  virtual ~SystemReport() = default;
  // A metric of the system's table (for a family, at its parameter).
  virtual double value(const MetricRef& metric) const = 0;
  // Requests (or messages) acknowledged and not finished when the run ended.
  virtual std::uint64_t open_work() const = 0;
  // The system's part of the terminal summary (`wall_seconds`: what the run took, for rates)
  // and of the JSON.
  virtual void print(std::ostream& out, double wall_seconds) const = 0;
  virtual void to_json(nlohmann::json& j, double wall_seconds) const = 0;
  // What a reader of the result should know that no figure shows: a fault that never happened.
  virtual std::vector<std::string> notes() const { return {}; }
  // What happened to the system's own world, beyond the scenario's top-level faults (which the
  // spine adds): its dependencies' outages, breaker transitions.
  virtual void timeline(std::vector<TimelineEvent>& out) const { (void)out; }
};

// Everything a system's world is built on for one run. The references outlive the world.
struct RunContext {
  const Scenario& scenario;  // as run: seed and store overrides applied
  Kernel& kernel;
  Fingerprint& fingerprint;  // the system attaches a FingerprintSink to each of its event buses
  Ledger& ledger;            // its checkers report here
  std::string sqlite_path;   // where a SQLite store lives (":memory:" by default)
  bool series = false;       // the run samples a time series: Simulation::sample will be called
  RecordSink* records = nullptr;  // where entities that did not end well go (nullptr: nowhere)
};

// A system's world for one run.
class Simulation {
 public:
  virtual ~Simulation() = default;
  // Requests (or messages) acknowledged and not yet finished: with nothing left to run, more
  // than zero of these is a stall.
  virtual std::uint64_t open_work() = 0;
  // What the system has acknowledged and finished so far, from its own events: the spine samples
  // it every second of virtual time (sim/report/backlog.h), so it must cost next to nothing.
  virtual WorkCount work() = 0;
  // Of the work open now, how much is in each of the system's groups (System::groups' order;
  // work in none is not counted): sampled with work(), so it too must cost next to nothing.
  // Where a piece of work is: the webhook request's endpoint group (none when ServiceB has no URL
  // for its cxid), the SMS message's provider of its last claim's submit (none until its first
  // claim ends), the outbox message's shard.
  virtual std::span<const std::uint64_t> open_by_group() const = 0;
  // Which of the groups are down for good (WorkCount::stuck): their open work can only wait for
  // its deadline, so it is left out of their drain. Empty where a system has none such.
  virtual std::vector<bool> down_for_good() const { return {}; }
  // Every latency the system's metrics have measured so far (since the warm-up): its groups'
  // together (GroupTally::all). The spine reads it once a minute of virtual time, for how long the
  // latency takes to recover after a fault (sim/report/backlog.h); a reference, copied only then.
  virtual const LatencyHistogram& latency_so_far() const = 0;
  // The warm-up ends at `at` (Scenario::warmup): from now on, count as if the run began here.
  // Everything the system's metrics and groups measure of the work done — counts, rates,
  // latencies, utilisation — starts again from zero, and work() counts from zero too (the spine
  // adds what came before); what the system's components are in (a breaker open, a pod async, a
  // term of leadership) carries over, and the invariants are still checked over the whole run.
  // It schedules nothing: a run's events and fingerprint do not depend on its warm-up.
  virtual void restart_measuring(Time at) = 0;
  // The run is over at `end`. With `judged`, the end-of-run checks run (nothing lost, everything
  // finished in time); a run cut short (interrupted, out of memory) is not judged on those, and
  // reports `open` as its unresolved work: what the spine counted acknowledged and not final
  // over the whole run (work() alone counts from the warm-up's end), as the store may be unusable.
  virtual std::unique_ptr<SystemReport> finish(Time end, bool judged, std::uint64_t open) = 0;
  // What the run finished, split by group (sim/report/groups.h); called once, after finish.
  virtual GroupTally take_groups() = 0;
  // Fills one row of the time series (System::series() gives its columns) for the window that
  // ends now, and starts the next one; and `groups`, the system's own columns of each of its
  // groups (System::group_series), group after group, when the run has columns per group
  // (SeriesColumns::groups; else it is empty). Called only when RunContext::series is set.
  virtual void sample(const SeriesWindow& window, std::span<double> row, std::span<double> groups) = 0;
};

class System {
 public:
  virtual ~System() = default;

  // The value of `system:` and the key of the system's section: "webhook".
  virtual std::string_view name() const = 0;
  // One line for people: "a webhook platform whose URLs live in an external service".
  virtual std::string_view title() const = 0;

  // Reads and validates the section at `path` (the top level has set the run's duration).
  virtual std::unique_ptr<SystemSpec> read(const Reader& r, const YAML::Node& section, const std::string& path) const = 0;
  // Writes the section back (the inverse of read, leaving out defaults).
  virtual void write(YAML::Emitter& e, const SystemSpec& spec) const = 0;
  // The reference tables of the section, for docs/scenario-format.md.
  virtual void document(std::vector<DocTable>& out) const = 0;

  virtual std::span<const MetricInfo> metrics() const = 0;
  // The columns of its time series (sim/report/series.h).
  virtual std::span<const SeriesColumn> series() const = 0;
  // The columns it adds to each group's, after kGroupSeries (sim/report/groups.h), in runs that
  // have columns per group: the SMS gateway's submits, failovers and ejections per provider.
  virtual std::span<const SeriesColumn> group_series() const { return {}; }
  // Its pipeline, edge by edge, each measured by one of its count metrics (sim/report/series.h).
  virtual std::span<const Flow> pipeline() const = 0;
  // The lifecycles of its entities and components, from the model's own tables
  // (model/core/lifecycle.h), for the docs to draw.
  virtual std::vector<LifecycleDiagram> lifecycles() const { return {}; }
  // What its runs split their figures by (GroupTally): "endpoint group", and each group's name
  // in `s`, in the order the tally numbers them.
  virtual std::string_view group_dimension() const = 0;
  virtual std::vector<std::string> groups(const Scenario& s) const = 0;
  virtual std::span<const InvariantInfo> invariants() const = 0;
  // The planted bugs the system's property suite must catch (model/core/mutants.h).
  virtual std::span<const Mutant* const> mutants() const = 0;

  // What a run of `s` will hold in memory, and the client calls it makes. `database_in_memory`:
  // a SQLite store lives in memory (no --sqlite-path), so every row it keeps costs memory too.
  virtual Footprint footprint(const Scenario& s, bool database_in_memory) const = 0;
  virtual std::unique_ptr<Simulation> simulate(RunContext& context) const = 0;

  // The scenario's pipeline as queueing theory sees it — one station of identical servers, its
  // peak arrival rate and its service time's moments — for the analytic side of `relaysim plan`;
  // nothing when the system has no such reading.
  virtual std::optional<queueing::Station> station(const Scenario& s) const {
    (void)s;
    return std::nullopt;
  }
  // Every station of the scenario's pipeline at the load's peak, for the capacity check
  // (sim/capacity.h): the one plan reads first, named, then any the system has besides (its rate
  // limits, a second stage). A system with a station() and nothing besides need not override it.
  virtual std::vector<queueing::StationLoad> stations(const Scenario& s) const {
    if (const auto st = station(s)) return {queueing::StationLoad{"pipeline", "servers", *st}};
    return {};
  }
  // `run --scale 1:N`: the values (as `--set` writes them, key.path=value) that make `s` about
  // N times smaller with every station as busy as before — its load, servers, tenants and
  // endpoints divided by N, its policies, latencies and faults as they are. Nothing when the
  // system has no such reading.
  virtual std::optional<std::vector<std::string>> scaled(const Scenario& s, std::uint32_t n) const {
    (void)s;
    (void)n;
    return std::nullopt;
  }
};

// The columns each group of `system` has in a run's time series, by their bare names ("pending"):
// kGroupSeries's (sim/report/groups.h), then the system's own (System::group_series).
std::vector<SeriesColumn> group_columns(const System& system);

// The columns of a run's time series: the system's own (System::series), then, when the scenario
// has two to kGroupsApart of the system's groups (sim/report/groups.h), each group's: the
// columns of kGroupSeries and the system's (System::group_series), named `pending[slow]` and
// labelled group="slow" in OpenMetrics.
class SeriesColumns {
 public:
  SeriesColumns(const System& system, const Scenario& s);
  SeriesColumns(const SeriesColumns&) = delete;  // the columns point into text_
  SeriesColumns& operator=(const SeriesColumns&) = delete;

  std::span<const SeriesColumn> all() const { return columns_; }
  // How many are the system's own (the first), how many groups have columns of their own, and
  // how many columns each group has (kGroupSeries's, then the system's).
  std::size_t own() const { return own_; }
  std::size_t groups() const { return groups_; }
  std::size_t per_group() const { return per_group_; }

 private:
  std::deque<std::string> text_;  // the group columns' names and labels (a deque: they stay put)
  std::deque<MetricFamily> families_;  // the OpenMetrics families of the system's group columns
  std::vector<SeriesColumn> columns_;
  std::size_t own_ = 0;
  std::size_t groups_ = 0;
  std::size_t per_group_ = 0;
};

// Every system relaysim can run, and the one named `name` (nullptr when none is).
std::span<const System* const> systems();
const System* find_system(std::string_view name);

// The metric `name` names in a run of `s`, as `expect:` and `relaysim plan --target` write it:
// one of the system's metrics (latency_p99_s), or a group's figure (latency_p99_s[slow], one of
// kGroupMetrics and one of the system's groups in `s`). Nothing, and `problem` says why, when it
// names none.
std::optional<MetricRef> resolve_metric(const Scenario& s, std::string_view name, std::string& problem);
// What `m` is: its entry in the system's metrics, or in the group metrics.
const MetricInfo& metric_info(const System& system, const MetricRef& m);

}  // namespace relaysim::sim
