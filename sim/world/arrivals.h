// Arrivals: when a system's clients call, whatever they call for — the load schedule every
// system shares. Each segment of the schedule is either a rate from `from` to `to` (Poisson,
// evenly spaced, or bursty) or a burst of calls all at one moment; what each call does is the
// system's. A piecewise load is a list of rate segments.
//
// Bursty arrivals are a two-state Markov-modulated Poisson process (MMPP), the usual model of
// traffic that comes in spells: Poisson at `peak` times the rate during high spells (exponential,
// of mean `spell`), and at a lower rate between them, such that the long-run mean is `rate` and
// the process is high `high_share` of the time.
//
// A Poisson or evenly spaced rate may also have a shape: a ramp (the rate goes linearly from
// `rate` at `from` to `ramp_to` at `to`) and a cycle (the rate times 1 + swing x cos(2 pi (t -
// peak_at) / period), t from the run's start: a day's traffic with its peak at `peak_at`). A
// shaped segment's calls are a non-homogeneous Poisson process, made by inverting its expected
// calls so far, Lambda(t): the k-th call comes when Lambda reaches the sum of k unit exponential
// draws (or k, evenly spaced). Unshaped segments are made as before, draw for draw.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/core/function.h"
#include "model/core/random.h"
#include "sim/kernel/kernel.h"
#include "sim/scenario/schema.h"

namespace relaysim::sim {

enum class Arrival : std::uint8_t { poisson, constant, bursty };

struct ArrivalSpec {
  double rate_per_s = 0.0;
  Time from{};
  Time to{};                // a rate runs in [from, to)
  Arrival arrival = Arrival::poisson;
  std::uint64_t burst = 0;  // > 0: `burst` calls at `from`; the rate is not used
  // Bursty arrivals: the rate of a high spell as a multiple of `rate`, the share of the time in
  // high spells, and a high spell's mean length. peak * high_share <= 1.
  double peak = 4.0;
  double high_share = 0.2;
  Duration spell = std::chrono::seconds(30);
  // The shape (Poisson and evenly spaced only): the rate at `to`, reached linearly from `rate`
  // (kNoRamp: none); the cycle's swing (0: none, 1: the rate touches 0 at its trough), period
  // and the moment of a peak, counted from the run's start.
  static constexpr double kNoRamp = -1.0;
  double ramp_to_per_s = kNoRamp;
  double swing = 0.0;
  Duration period = std::chrono::hours(24);
  Duration peak_at = std::chrono::hours(12);
  bool operator==(const ArrivalSpec&) const = default;

  // A cycle shorter than a second would swing the rate faster than any queue notices; one
  // longer than a year is a ramp.
  static constexpr Bounds<Duration> kCyclePeriod{std::chrono::seconds(1), std::chrono::hours(24 * 366)};

  bool ramps() const { return ramp_to_per_s >= 0; }
  bool shaped() const { return ramps() || swing > 0; }
  // Calls per second at `t`, the shape included; 0 outside [from, to) and for a burst.
  double rate_at(Time t) const;
  // The most calls per second the segment ever makes (an upper bound for a shaped one).
  double max_rate_per_s() const;
  // The calls a rate segment is expected to make in [from, t): Lambda(t), the integral of
  // rate_at. 0 before `from`; Lambda(to) after `to`.
  double calls_before(Time t) const;
  // The first moment at or after `hint` at which calls_before reaches `calls`, kTimeNever when it
  // never does before `to`. Lambda must be below `calls` at `hint`, or `hint` is the answer.
  Time when_calls_reach(double calls, Time hint) const;
  // The moments a shaped segment's rate is highest at, for peak_load: its ends and the cycle's
  // peaks (at most a few thousand of them). An unshaped segment's is `from`.
  std::vector<Time> busiest_moments() const;

  // A spell shorter than a millisecond switches the rate a million times a second of virtual
  // time: a busy loop, not a load. A low spell (spell x (1 - high_share) / high_share) must also
  // fit the longest duration there is (checked with both known).
  static constexpr Bounds<Duration> kSpell{std::chrono::milliseconds(1), kLongestDuration};
  static constexpr Bounds<double> kHighShare{0.0, 1.0, true};  // and below 1: checked, as 100% has no low spell

  // How many calls the segment makes, on average; with `end`, only those before it (a segment
  // may run past the end of the run, and what never runs costs nothing).
  double expected_calls() const;
  double expected_calls(Time end) const;
  // Calls per second in a bursty segment's high and low spells, and a low spell's mean length.
  double high_rate_per_s() const { return peak * rate_per_s; }
  double low_rate_per_s() const;
  Duration low_spell() const;
  // The arrivals' variability as the queueing formulas read it (Kingman's c_a^2): 1 for Poisson,
  // 0 for evenly spaced, and for bursty arrivals the MMPP's asymptotic index of dispersion of
  // counts, which is what a queue under heavy load feels of them.
  double scv() const;
};

// The busiest moment of a load: the most work its rate segments offer at once, each counted as
// its rate times `weight` (the work one call brings: a bulk request's messages, an operation's
// outbox rows), and the arrivals' variability then (Kingman's c_a², weighted by rate). Segments
// that overlap add up; a burst is not a rate and is left out.
struct WeightedArrivals {
  const ArrivalSpec* arrivals = nullptr;
  double weight = 1.0;
};
struct PeakLoad {
  double rate_per_s = 0.0;
  double scv = 1.0;
  bool bursty = false;  // a segment then comes in spells (MMPP)
};
PeakLoad peak_load(std::span<const WeightedArrivals> segments);

// The keys of an arrival segment (rate, from, to, arrival, or burst and at), for a system's load
// schema to include.
const Schema<ArrivalSpec>& arrival_schema();

class Arrivals {
 public:
  // Called once per arrival with the segment's index.
  using Sink = InplaceFunction<void(std::uint32_t segment), 16>;

  // `rng` is the caller's: it draws the gaps between the calls the sink makes, from the same
  // stream as whatever the sink draws, in call order.
  Arrivals(std::vector<ArrivalSpec> segments, Rng& rng, Sink sink);
  void install(Kernel& kernel);

 private:
  void arrive(Kernel& kernel, std::uint32_t segment);
  // When the next call of bursty segment `segment` comes after `now` (kTimeNever: not before its
  // end), moving through its spells as it goes.
  Time next_bursty(std::uint32_t segment, Time now);

  struct Spell {
    bool high = false;
    Time ends{};
  };

  // The most calls of a burst made in one event.
  static constexpr std::uint64_t kBurstChunk = 4096;

  std::vector<ArrivalSpec> segments_;
  std::vector<std::uint64_t> burst_done_;  // per segment: calls of its burst made so far
  std::vector<Spell> spells_;              // per segment: a bursty one's current spell
  std::vector<double> reached_;            // per segment: a shaped one's Lambda at its next call (< 0: not drawn)
  Rng& rng_;
  Sink sink_;
};

}  // namespace relaysim::sim
