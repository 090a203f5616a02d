// Arrivals: when a system's clients call, whatever they call for — the load schedule every
// system shares. Each segment of the schedule is either a rate from `from` to `to` (Poisson,
// evenly spaced, or bursty) or a burst of calls all at one moment; what each call does is the
// system's. A piecewise load is a list of rate segments.
//
// Bursty arrivals are a two-state Markov-modulated Poisson process (MMPP), the usual model of
// traffic that comes in spells: Poisson at `peak` times the rate during high spells (exponential,
// of mean `spell`), and at a lower rate between them, such that the long-run mean is `rate` and
// the process is high `high_share` of the time.
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
  bool operator==(const ArrivalSpec&) const = default;

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
  Rng& rng_;
  Sink sink_;
};

}  // namespace relaysim::sim
