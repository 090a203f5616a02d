// The backlog of a run — requests or messages acknowledged and not yet finished — sampled by the
// spine at a fixed step of virtual time for every run of every system, and what is read from it:
// its peak, its time-average (L in Little's law) and how long it took to come back after each
// fault (the drain time a capacity planner asks for: "how long does a 2 h outage take to drain?").
//
// Sampling reads a counter the system keeps from its own events and schedules nothing, so a run
// has the same events and fingerprint however it is sampled.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/core/time.h"
#include "sim/report/histogram.h"
#include "sim/report/series.h"

namespace relaysim::sim {

// How one group's backlog came back after a fault episode (the run has two groups or more): its
// level, peak and drain, read as the whole's are (Drain) on the group's own backlog, except that
// the level leaves out samples taken during an earlier fault (a failover empties one provider's
// backlog while the whole's stays level), and that a group whose backlog did not rise during the
// faults (its peak under them at most a tenth and one above its level) is `unaffected`: no drain
// is sought for it, as a noisy group would "drain" whenever it dipped under its own mean.
struct GroupDrain {
  std::size_t group = 0;  // an index of the system's groups (System::groups)
  double level = 0;
  std::uint64_t peak = 0;  // from the episode's start until the whole drained (or the group did, if later)
  Time drained = kTimeNever;
  bool down_for_good = false;  // its work waits for its deadline: no drain is sought
  bool affected = true;
  bool drained_by_end() const { return drained != kTimeNever; }
  bool sought() const { return affected && !down_for_good; }
};

// What the backlog did around one fault episode: a fault window, or several whose effects ran
// into each other (a window that begins before the backlog of the one before has drained joins
// its episode).
struct Drain {
  Time fault_start{};
  Time fault_end{};        // the end of the episode's last window
  double level = 0;        // the backlog before the episode: its mean over the 5 minutes before
  std::uint64_t peak = 0;  // the most open at once from the episode's start until drained
  Time drained = kTimeNever;  // the first sample at or after fault_end back at `level` or below
  // The first sample at or after fault_end within a tenth of the way from `peak` back to `level`:
  // nine tenths of what the fault held up is through. Unlike `drained`, which a light backlog
  // reaches only when it happens to dip under its mean, this does not wait on the noise.
  Time mostly_drained = kTimeNever;
  std::string what;           // the episode's windows: "outage serviceb, crash pod-1"
  // Open then (at `drained`, or at the last sample), in groups down for good: left out of the
  // level, the peak and the drain, since they cannot come back whatever the platform does.
  std::uint64_t stuck = 0;

  // The latency the system's metrics measure, read per minute of the trace (the p99 of the work
  // finished in the minute): the worst of the minutes that end in the five before the episode
  // (none when nothing finished then), and the end of the first minute that begins at or after
  // fault_end, ends by the next episode's start, has finished work, and whose p99 is back at that
  // level (at or under it, give or take the width of its histogram bucket).
  std::optional<Duration> latency_level;
  Time latency_back = kTimeNever;
  // Each group's (BacklogTrace::trace_groups), in the system's order; empty when not traced.
  std::vector<GroupDrain> groups;

  bool drained_by_end() const { return drained != kTimeNever; }
  // From the end of the faults until the backlog was back at its level (+inf: never, in the run).
  double seconds() const;
  // From the end of the faults until nine tenths of the backlog was through (+inf: never).
  double mostly_seconds() const;
  // From the end of the faults until the p99 latency was back at its level (+inf: never, in the
  // run; NaN: no level to come back to).
  double latency_seconds() const;
};

class BacklogTrace {
 public:
  // A sample every second, or every 1/100 000 of a longer run, so a month-long run costs no more
  // than a day's: the resolution of every drain time.
  static Duration step_for(Duration run_length);

  explicit BacklogTrace(Duration run_length);

  Duration step() const { return step_; }
  // When the next sample is due.
  Time next() const { return Time{} + step_ * static_cast<std::int64_t>(samples_.size() + 1); }
  // The backlog at next(): `open` in all, `stuck` of them in groups down for good (WorkCount).
  // `opened` and `finished`: the work acknowledged and finished so far, for the busiest minute.
  void take(std::uint64_t open, std::uint64_t stuck, std::uint64_t opened = 0, std::uint64_t finished = 0) {
    samples_.push_back(open);
    live_.push_back(open - std::min(open, stuck));
    opened_.push_back(opened);
    finished_.push_back(finished);
  }
  // The backlog of each of the run's groups is traced too, from the first sample on, when it has
  // two to kGroupsApart (sim/report/groups.h): take_groups(), after each take(), hands the work
  // open in each (Simulation::open_by_group). `down_for_good`: the groups whose drain is not
  // sought (Simulation::down_for_good; empty: none).
  void trace_groups(std::size_t groups, std::vector<bool> down_for_good);
  bool groups_traced() const { return groups_ > 0; }
  void take_groups(std::span<const std::uint64_t> open);
  // The latency is read every kLatencySteps samples (a minute, or 1/1667 of a run longer than
  // 100 000 s, about 28 hours): after take(), when latency_due(), the spine hands take_latency() every latency the
  // system has measured so far (Simulation::latency_so_far), and the trace keeps what that
  // minute added, bucket by bucket. restart_latency(): the system is about to measure from zero
  // (its warm-up ends); what it measured of the minute so far is carried into the minute.
  static constexpr std::size_t kLatencySteps = 60;
  bool latency_due() const { return !samples_.empty() && samples_.size() % kLatencySteps == 0; }
  void take_latency(const LatencyHistogram& so_far);
  void restart_latency(const LatencyHistogram& so_far);

  // The warm-up ends: peak() and mean() leave out the samples taken so far (drains and
  // settle_time() still read the whole trace).
  void measure_from_here() { from_ = samples_.size(); }

  // The most, and the time-average, over the samples measured (0 with none).
  std::uint64_t peak() const;
  double mean() const;
  // The most acknowledged, and finished, in any minute of the samples measured (or in one step,
  // if a step is longer), per second: the peak beside the run's average, which a quiet night or
  // a long drain pulls down. 0 in a run shorter than that.
  double peak_arrivals_per_s() const { return peak_rate(opened_); }
  double peak_throughput_per_s() const { return peak_rate(finished_); }
  // Where the backlog settles: the warm-up MSER-5 chooses (White, 1997; the rule JMT and most
  // simulation texts use). The trace is cut into batches of five samples, and the cut is the
  // number of leading batches whose removal leaves the rest varying least about its mean, per
  // batch left: argmin over d of S²(d) / (k - d), searched over the first half of the k batches.
  // A cut near half the run means the run is too short to have settled.
  Duration settle_time() const;
  // The drain of every fault episode whose windows (TimelineEvent::fault, with an end) lie
  // within the samples; one that begins at the run's start has no level to come back to and is
  // left out. Read on the backlog without the work stuck in groups down for good: a dead
  // endpoint's requests wait for their deadline, so with them the backlog would never drain.
  std::vector<Drain> drains(const std::vector<TimelineEvent>& timeline) const;

 private:
  double peak_rate(const std::vector<std::uint64_t>& counts) const;
  // Fills in the episode's latency_level and latency_back from the minutes read, looking for the
  // recovery only before `next_fault` (the next episode's start, or kTimeNever).
  void latency_recovery(Drain& d, Time next_fault) const;
  // The sample at or before `t` (0 before the first).
  std::size_t index_at(Time t) const;
  Time time_of(std::size_t i) const { return Time{} + step_ * static_cast<std::int64_t>(i + 1); }

  Duration step_;
  std::vector<std::uint64_t> samples_;  // samples_[i]: the backlog at (i + 1) steps
  std::vector<std::uint64_t> live_;     // live_[i]: the part of it not stuck
  std::vector<std::uint64_t> opened_;   // opened_[i]: acknowledged by then, since the start
  std::vector<std::uint64_t> finished_;  // finished_[i]: finished by then
  std::size_t groups_ = 0;                // traced apart (0: not traced)
  std::vector<bool> down_for_good_;       // by group
  // by_group_[i * groups_ + g]: the backlog of group g at (i + 1) steps (saturated at 2^32 - 1).
  std::vector<std::uint32_t> by_group_;
  // minutes_[m]: the latencies measured in samples m·kLatencySteps to (m + 1)·kLatencySteps - 1.
  std::vector<std::vector<LatencyHistogram::Piece>> minutes_;
  LatencyHistogram previous_;                   // what the system had measured at the last reading
  std::vector<LatencyHistogram::Piece> carried_;  // of this minute, measured before a restart
  std::size_t from_ = 0;                // the first sample after the warm-up
};

}  // namespace relaysim::sim
