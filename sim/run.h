// run_scenario: one whole simulated run of any system — the generic loop around the system's
// world: virtual time in slices, progress, a limit on events, stop requests, drained and stalled
// detection, the fingerprint, the ledger of invariants, the metrics and the expectations.
//
// The caller (the CLI, a test) owns everything outside virtual time: wall-clock timing, the
// progress display and stop requests (Ctrl-C) reach the run through callbacks, never a clock, so
// the run itself stays deterministic.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/core/function.h"
#include "model/core/names.h"
#include "sim/oracle/ledger.h"
#include "sim/scenario/scenario.h"
#include "sim/system.h"

namespace relaysim::sim {

struct RunOptions {
  std::optional<std::uint64_t> seed;  // overrides the scenario's
  std::optional<StoreKind> store;     // overrides the scenario's
  std::string sqlite_path = ":memory:";
  // Stop after this many events: a run that never ends is a livelock. 0: the default for the
  // scenario, default_event_limit().
  std::uint64_t max_events = 0;
  // Called every slice of virtual time (1 % of it) and every few tens of thousands of events.
  InplaceFunction<void(Time now, std::uint64_t events), 32> progress;
  // Asked as often as progress: true stops the run where it is (Ctrl-C, a memory limit).
  InplaceFunction<bool(), 32> should_stop;
  // With a sink, the run's time series goes there: a row every `series_interval` of virtual time
  // (and a last, shorter one where the run ended).
  SeriesSink* series = nullptr;
  Duration series_interval = std::chrono::minutes(1);
  // With a sink, every entity that did not end well goes there as it ends.
  RecordSink* records = nullptr;
};

// How a run ended.
enum class Ending : std::uint8_t {
  finished,       // virtual time reached the scenario's duration
  drained,        // nothing was left to do before that
  event_limit,    // stopped by the event limit: a livelock
  interrupted,    // stopped on request (should_stop)
  out_of_memory,  // the machine ran out of memory
  store_failure,  // the store failed in a way the run cannot go on from
};
inline constexpr auto kEndingNames = names<Ending>({
    {Ending::finished, "finished"}, {Ending::drained, "drained"}, {Ending::event_limit, "event_limit"},
    {Ending::interrupted, "interrupted"}, {Ending::out_of_memory, "out_of_memory"},
    {Ending::store_failure, "store_failure"}});
constexpr std::string_view to_string(Ending e) { return kEndingNames[e]; }

struct ExpectationResult {
  std::string expr;  // "dlq_rate < 0.1%"
  Unit unit = Unit::count;
  bool ok = false;
  double actual = 0.0;
};

struct RunResult {
  Scenario scenario;  // as run (seed and store overrides applied)
  std::uint64_t fingerprint = 0;
  Time end{};
  std::uint64_t events = 0;
  std::uint64_t event_limit = 0;
  Ending ending = Ending::finished;
  std::string failure;  // out_of_memory, store_failure: what happened
  Ledger ledger;
  // Every metric of the system's table, in its order (NaN for a family; see value()).
  std::vector<double> values;
  std::vector<ExpectationResult> expectations;
  std::unique_ptr<SystemReport> report;
  // What happened to the world: the scenario's faults and the system's own events, up to `end`,
  // and the backlog's drain after each fault.
  std::vector<TimelineEvent> timeline;
  // What the spine measured: the backlog and its drains, the work done.
  RunFigures run;
  // What the run finished, by endpoint group, provider or shard.
  GroupTally groups;

  const System& system() const { return *scenario.system; }
  double value(std::size_t metric) const { return values.at(metric); }
  // Any metric of the system's table, a family's at its parameter: the system's own from its
  // report, the run metrics (sim/report/run_metrics.h) from `run`. NaN without a report.
  double metric(const MetricRef& m) const;
  std::uint64_t open_work() const { return report ? report->open_work() : 0; }
  bool drained() const { return ending == Ending::drained; }
  bool hit_event_limit() const { return ending == Ending::event_limit; }
  // The end-of-run checks ran: the run was not cut short.
  bool judged() const { return ending == Ending::finished || ending == Ending::drained || ending == Ending::event_limit; }
  // Nothing was left to do while requests were still open: the platform stopped making progress.
  bool stalled() const { return drained() && open_work() > 0; }
  bool pass() const;
};

// The event limit a run of `s` gets when RunOptions::max_events is 0: far above what the
// scenario's load needs (a thousand events per client call, plus a hundred million), so only a
// livelock reaches it.
std::uint64_t default_event_limit(const Scenario& s);

RunResult run_scenario(const Scenario& scenario, RunOptions options = {});

}  // namespace relaysim::sim
