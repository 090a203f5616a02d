// The metrics every run has, whatever its system: what the spine reads from the backlog it samples
// (sim/report/backlog.h) and from the work the system counted. They follow each system's own
// metrics in its table (metric_infos_of, sim/report/metric.h), so `expect:`, `relaysim metrics`,
// the JSON, sweeps, `relaysim plan` and the docs serve them as they serve the system's own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/report/backlog.h"
#include "sim/report/metric.h"

namespace relaysim::sim {

// Requests (or messages) a system has acknowledged and finished so far, as its own events counted
// them. Cheap to ask every second of virtual time.
struct WorkCount {
  std::uint64_t opened = 0;    // acknowledged (a replay opens a request again)
  std::uint64_t finished = 0;  // reached a final state, whichever
  // Of those open now, how many belong to a group down for good (a webhook endpoint group `down`
  // with no end): a level, not a count since the warm-up; 0 where a system has no such group.
  std::uint64_t stuck = 0;
  std::uint64_t open() const { return opened - std::min(opened, finished); }
};

// What the spine measured of one run.
struct RunFigures {
  double seconds = 0;  // virtual time measured: from the warm-up's end to the run's
  WorkCount work;      // after the warm-up
  std::uint64_t peak_backlog = 0;
  double mean_backlog = 0;
  double peak_arrivals_per_s = 0;    // in the busiest minute (BacklogTrace::peak_arrivals_per_s)
  double peak_throughput_per_s = 0;  // in the minute that finished most
  std::vector<Drain> drains;
  Duration step{};  // the backlog's sampling step: the resolution of drain times
  double settle_s = 0;  // the warm-up the backlog trace suggests (BacklogTrace::settle_time)

  // The longest drain (+inf when one never drained; NaN with no fault to drain from).
  double drain_time_s() const;
  // The longest recovery of the p99 latency (Drain::latency_seconds: +inf when one never came
  // back; NaN with no fault that had a level to come back to).
  double latency_recovery_s() const;
};

struct RunMetric {
  MetricInfo info;
  double (*value)(const RunFigures& f);
};

// clang-format off
inline constexpr RunMetric kRunMetrics[] = {
    {{"throughput_per_s", Unit::number, "requests or messages that reached a final state, per second of the run (after the warm-up)"}, [](const RunFigures& f) { return metric_math::ratio(metric_math::d(f.work.finished), f.seconds); }},
    {{"arrivals_per_s", Unit::number, "requests or messages acknowledged, per second of the run after the warm-up (λ in Little's law)"}, [](const RunFigures& f) { return metric_math::ratio(metric_math::d(f.work.opened), f.seconds); }},
    {{"peak_arrivals_per_s", Unit::number, "requests or messages acknowledged in the busiest minute of the run (after the warm-up), per second: the peak beside arrivals_per_s's average"}, [](const RunFigures& f) { return f.peak_arrivals_per_s; }},
    {{"peak_throughput_per_s", Unit::number, "requests or messages that reached a final state in the minute that finished most (after the warm-up), per second"}, [](const RunFigures& f) { return f.peak_throughput_per_s; }},
    {{"peak_backlog", Unit::count, "the most requests or messages acknowledged and not final at once after the warm-up (sampled every second, or every 1/100000 of a longer run)"}, [](const RunFigures& f) { return metric_math::d(f.peak_backlog); }},
    {{"mean_backlog", Unit::number, "requests or messages acknowledged and not final, on average over the run after the warm-up (L in Little's law)"}, [](const RunFigures& f) { return f.mean_backlog; }},
    {{"settle_time_s", Unit::seconds, "the warm-up the backlog suggests: MSER-5 on the whole run's backlog trace (the time from which it varies least about its mean); a `warmup` shorter than this measures part of the ramp, and half the run or more means the run is too short to settle"}, [](const RunFigures& f) { return f.settle_s; }},
    {{"drain_time_s", Unit::seconds, "after a fault window ends, the time until the backlog is back at its level before the fault, leaving out work stuck in groups down for good; the longest over the run's faults (never: one did not drain; n/a: no fault)"}, [](const RunFigures& f) { return f.drain_time_s(); }},
    {{"latency_recovery_s", Unit::seconds, "after a fault window ends, the time until the p99 latency of the work finished in a minute is back at the worst such minute's of those ending in the five minutes before the fault (within the histogram's resolution): to the end of the first whole minute after the fault, and before the next one, that is, so at least a minute (60 backlog samples: 1/1667 of a run longer than about 28 hours); the longest over the run's faults (never: one did not come back before the run or the next fault began; n/a: no fault, or nothing finished in the five minutes before it)"}, [](const RunFigures& f) { return f.latency_recovery_s(); }},
};
// clang-format on

// The value of the run metric at `index` of kRunMetrics.
double run_metric_value(const RunFigures& f, std::size_t index);
// The value of the run metric called `name`, which must be one of kRunMetrics.
double run_metric_value(const RunFigures& f, std::string_view name);

}  // namespace relaysim::sim
