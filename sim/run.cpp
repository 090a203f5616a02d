#include "sim/run.h"

#include <cinttypes>
#include <cmath>
#include <limits>
#include <new>
#include <optional>

#include "model/core/assert.h"
#include "model/store/store_error.h"
#include "sim/report/text.h"
#include "sim/scenario/expect.h"

namespace relaysim::sim {

bool RunResult::pass() const {
  if (ledger.total() != 0 || stalled() || ending == Ending::event_limit || !judged()) return false;
  for (const auto& e : expectations) {
    if (!e.ok) return false;
  }
  return true;
}

double RunResult::metric(const MetricRef& m) const {
  if (!report) return std::nan("");
  if (m.group != MetricRef::kNoGroup) return group_metric_value(groups, m);
  RELAYSIM_ASSERT(m.index < system().metrics().size(), "a metric of the system's table");
  const std::size_t own = system().metrics().size() - std::size(kRunMetrics);
  return m.index < own ? report->value(m) : run_metric_value(run, m.index - own);
}

std::uint64_t default_event_limit(const Scenario& s) {
  RELAYSIM_ASSERT(s.system != nullptr && s.has_spec(), "a scenario names its system and has its section");
  const Footprint f = s.system->footprint(s, true);
  // Each firing of a timer is a handful of events (a store call, a publish, its answer).
  const double limit = 1e8 + 1000.0 * f.calls + 10.0 * f.timer_firings;
  return limit >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(limit);
}

namespace {

// Events between two looks at progress and stop requests: a few milliseconds of work.
constexpr std::uint64_t kEventsPerCheck = 1 << 16;

// Takes a row of the time series from the world at every interval of virtual time.
class Sampler {
 public:
  Sampler(Simulation& world, SeriesSink* sink, Duration interval, const SeriesColumns& columns)
      : world_(world),
        sink_(sink),
        interval_(interval),
        own_(columns.own()),
        groups_(columns.groups()),
        per_group_(columns.per_group()),
        row_(columns.all().size()),
        systems_(groups_ * (per_group_ - std::min(per_group_, std::size(kGroupSeries)))) {
    RELAYSIM_ASSERT(sink == nullptr || interval > Duration{}, "a time series has windows of some length");
    RELAYSIM_ASSERT(sink == nullptr || own_ > 0, "a time series has columns");
    RELAYSIM_ASSERT(row_.size() == own_ + groups_ * per_group_, "the system's columns, then each group's");
  }
  // When the next row is due (never, without a sink).
  Time next() const { return sink_ != nullptr ? last_ + interval_ : kTimeNever; }
  // The window from the last row to `now` ends: a row for it. `events`: the events the run has
  // run so far. A window of no length gets a row only when events ran since the last row: a run
  // that ran out of work at the very instant a window began did its last in that window, which
  // must be counted somewhere for the rows to add up to the run's totals.
  void take(Time now, std::uint64_t events) {
    if (sink_ == nullptr || now < last_ || (now == last_ && events == events_)) return;
    const SeriesWindow window{last_, now};
    world_.sample(window, std::span<double>(row_).first(own_), systems_);
    if (groups_ > 0) {
      // Each group's: its pending work (kGroupSeries), then the system's own columns.
      static_assert(std::size(kGroupSeries) == 1, "the columns every group has are its pending work alone");
      const std::span<const std::uint64_t> open = world_.open_by_group();
      RELAYSIM_ASSERT(open.size() == groups_, "the system counts its work open in each of its groups");
      const std::size_t theirs = per_group_ - 1;
      for (std::size_t g = 0; g < groups_; ++g) {
        double* at = row_.data() + own_ + g * per_group_;
        at[0] = static_cast<double>(open[g]);
        std::copy_n(systems_.begin() + static_cast<std::ptrdiff_t>(g * theirs), theirs, at + 1);
      }
    }
    sink_->row(window, row_);
    last_ = now;
    events_ = events;
  }

 private:
  Simulation& world_;
  SeriesSink* sink_;
  Duration interval_;
  std::size_t own_;        // the system's own columns, first
  std::size_t groups_;     // groups with columns of their own, after them
  std::size_t per_group_;  // columns each
  Time last_{};
  std::uint64_t events_ = 0;  // the events run when the last row was taken
  std::vector<double> row_;
  std::vector<double> systems_;  // the system's columns of each group, group after group
};

// What the run has acknowledged and finished, whole: the work the system counted before its
// warm-up ended, and what it has counted since.
class WorkTally {
 public:
  // `warm`: there is no warm-up; everything is measured from the start.
  WorkTally(Simulation& world, bool warm) : world_(world), warm_(warm) {}
  WorkCount total() const {
    const WorkCount now = world_.work();
    return {before_.opened + now.opened, before_.finished + now.finished, now.stuck};
  }
  bool warm() const { return warm_; }
  const LatencyHistogram& latency() const { return world_.latency_so_far(); }
  std::span<const std::uint64_t> open_by_group() const { return world_.open_by_group(); }
  // The warm-up ends at `at`: the system counts from zero, and the backlog is measured from here.
  void end_warmup(Time at, BacklogTrace& backlog) {
    RELAYSIM_ASSERT(!warm_, "a run has one warm-up");
    before_ = total();
    backlog.restart_latency(world_.latency_so_far());
    world_.restart_measuring(at);
    backlog.measure_from_here();
    warm_ = true;
  }

 private:
  Simulation& world_;
  WorkCount before_;
  bool warm_;
};

// Runs every event due at or before `until`, in batches between which progress is told and stop
// requests are heard; why the run must stop, if it must.
std::optional<Ending> run_through(Kernel& kernel, Time until, RunOptions& options, std::uint64_t limit) {
  for (bool more = true; more;) {
    std::uint64_t n = 0;
    kernel.take_yield();  // a request made by the last event of the previous batch is answered
    while ((more = kernel.step(until)) && ++n < kEventsPerCheck && !kernel.take_yield()) {
    }
    if (options.progress) options.progress(kernel.now(), kernel.events_run());
    if (kernel.events_run() > limit) return Ending::event_limit;
    if (options.should_stop && options.should_stop()) return Ending::interrupted;
  }  // !more: everything up to `until` has run
  return std::nullopt;
}

// Runs the kernel to the scenario's end, or until something stops it; returns why it stopped.
// The backlog is sampled on its own steps (BacklogTrace::next()), whether or not there is a series.
Ending run_loop(Kernel& kernel, const Scenario& s, RunOptions& options, std::uint64_t limit, Sampler& sampler,
                WorkTally& work, BacklogTrace& backlog) {
  RELAYSIM_ASSERT(s.duration > Duration::zero(), "a run lasts some time");
  const Time end = Time{} + s.duration;
  const Time warm_at = Time{} + s.warmup;
  const Duration slice = std::max<Duration>(s.duration / 100, Duration{1});
  for (Time t = Time{}; t < end;) {
    // A slice ends early where a row of the time series, a sample of the backlog or the end of
    // the warm-up is due.
    t = std::min({end, t + slice, sampler.next(), backlog.next(), work.warm() ? kTimeNever : warm_at});
    // A window of the time series is [start, end): what happens at the very instant it ends (a
    // burst `at: 2m` with 1-minute windows) belongs to the next window. So its row is taken once
    // every event before `t` has run and before any event at `t` does. (An event scheduled at `t`
    // to take it would not do: the kernel runs the events of one instant in the order they were
    // scheduled, so it would come after those scheduled earlier for `t`, and it would be one more
    // event of the run.) The loop takes it between events and schedules nothing, so a run with a
    // series has the same events, in the same order, and the same fingerprint as one without.
    // The run's last window is closed: it also holds what happens at the run's end (its row is
    // taken after the loop).
    if (t == sampler.next() && t < end) {
      if (const auto stop = run_through(kernel, t - Duration{1}, options, limit)) return *stop;
      if (kernel.pending() == 0) return Ending::drained;
      kernel.advance_to(t);  // levels and busy time are read at the window's end
      sampler.take(t, kernel.events_run());
    }
    // The backlog's sample and the end of the warm-up see everything up to `t`, events at `t`
    // included, and nothing after, whether or not there is a series.
    if (const auto stop = run_through(kernel, t, options, limit)) return *stop;
    if (kernel.pending() == 0) return Ending::drained;
    kernel.advance_to(t);
    if (t == backlog.next()) {
      const WorkCount total = work.total();
      backlog.take(total.open(), total.stuck, total.opened, total.finished);
      if (backlog.groups_traced()) backlog.take_groups(work.open_by_group());
      if (backlog.latency_due()) backlog.take_latency(work.latency());
    }
    if (!work.warm() && t == warm_at) work.end_warmup(t, backlog);
  }
  return Ending::finished;
}

// Builds the world, runs it to its end and has it judged, into `result`: how the run ended, when,
// after how many events, and the system's report. A world that cannot be built leaves no report.
void run_world(const System& system, RunContext& context, RunOptions& options, BacklogTrace& backlog, RunResult& result) {
  Kernel& kernel = context.kernel;
  const Scenario& s = context.scenario;
  std::unique_ptr<Simulation> world;
  std::optional<WorkTally> work;
  try {
    world = system.simulate(context);
    const SeriesColumns columns(system, s);
    Sampler sampler(*world, options.series, options.series_interval, columns);
    backlog.trace_groups(system.groups(s).size(), world->down_for_good());
    work.emplace(*world, s.warmup == Duration{});
    result.ending = run_loop(kernel, s, options, result.event_limit, sampler, *work, backlog);
    sampler.take(kernel.now(), kernel.events_run());  // the last window, shorter than the others
    // A run that stopped within its warm-up measured nothing.
    if (!work->warm()) work->end_warmup(kernel.now(), backlog);
    result.run.work = world->work();
  } catch (const std::bad_alloc&) {
    result.ending = Ending::out_of_memory;
    result.failure = "the machine ran out of memory at virtual " + format_time(kernel.now()) + " after " +
                     std::to_string(kernel.events_run()) + " events";
  } catch (const StoreError& e) {
    result.ending = Ending::store_failure;
    result.failure = e.what();
  }
  // Judge the run where it really stopped: at the duration, when the queue ran dry, or where
  // it was cut off.
  result.end = result.ending == Ending::finished ? std::max(kernel.now(), Time{} + s.duration) : kernel.now();
  result.events = kernel.events_run();
  if (world) {
    try {
      result.report = world->finish(result.end, result.judged(), work ? work->total().open() : 0);
      result.groups = world->take_groups();
      scenario_timeline(s, result.end, result.timeline);
      if (result.report) result.report->timeline(result.timeline);
    } catch (const std::bad_alloc&) {
      result.ending = Ending::out_of_memory;
      result.failure = "the machine ran out of memory while the run was being judged";
    }
  }
}

// The spine's own figures of the run: its measured length and its backlog's course, with each
// drain after a fault put on the timeline.
void measure(const BacklogTrace& backlog, RunResult& result) {
  const Scenario& s = result.scenario;
  RunFigures& run = result.run;
  run.seconds = std::max(0.0, to_seconds(result.end) - to_seconds(s.warmup));
  run.step = backlog.step();
  run.settle_s = to_seconds(backlog.settle_time());
  run.peak_backlog = backlog.peak();
  run.mean_backlog = backlog.mean();
  run.peak_arrivals_per_s = backlog.peak_arrivals_per_s();
  run.peak_throughput_per_s = backlog.peak_throughput_per_s();
  run.drains = backlog.drains(result.timeline);
  for (const Drain& d : run.drains) {
    result.timeline.push_back({d.fault_end, d.drained_by_end() ? d.drained - d.fault_end : result.end - d.fault_end, "drain", d.what,
                               (d.drained_by_end() ? fmt("back to %.0f open, from a peak of %" PRIu64, d.level, d.peak)
                                                   : fmt("not back to %.0f open by the end", d.level)) +
                                   (d.stuck > 0 ? fmt(", except %" PRIu64 " in groups down for good", d.stuck) : "")});
  }
}

}  // namespace

RunResult run_scenario(const Scenario& input, RunOptions options) {
  RELAYSIM_ASSERT(input.system != nullptr && input.has_spec(), "a scenario names its system and has its section");
  RunResult result;
  result.scenario = input;
  Scenario& s = result.scenario;
  if (options.seed) s.seed = *options.seed;
  if (options.store) s.store = *options.store;
  const System& system = *s.system;
  result.ledger = Ledger(system.invariants());
  result.event_limit = options.max_events != 0 ? options.max_events : default_event_limit(s);

  Kernel kernel;
  Fingerprint fp;
  fp.mix(s.seed);
  RunContext context{s, kernel, fp, result.ledger, options.sqlite_path, options.series != nullptr, options.records};
  BacklogTrace backlog(s.duration);
  run_world(system, context, options, backlog, result);
  fp.mix(result.events);
  result.fingerprint = fp.value();
  if (!result.report) return result;  // the world could not even be built

  measure(backlog, result);
  const std::span<const MetricInfo> table = system.metrics();
  result.values.reserve(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    result.values.push_back(is_family(table[i].name) ? std::nan("") : result.metric(MetricRef{i, 0}));
  }
  for (const Expectation& e : s.expect) {
    const MetricRef ref{e.metric, e.parameter, e.group};
    const double actual = result.metric(ref);
    result.expectations.push_back({e.name + " " + e.text, metric_info(system, ref).unit, holds(e, actual), actual});
  }
  return result;
}

}  // namespace relaysim::sim
