// Arrivals: when a system's clients call, whatever they call for — the load schedule every
// system shares. Each segment of the schedule is either a rate from `from` to `to` (Poisson or
// evenly spaced) or a burst of calls all at one moment; what each call does is the system's.
#pragma once

#include <cstdint>
#include <vector>

#include "model/core/function.h"
#include "model/core/random.h"
#include "sim/kernel/kernel.h"
#include "sim/scenario/schema.h"

namespace relaysim::sim {

enum class Arrival : std::uint8_t { poisson, constant };

struct ArrivalSpec {
  double rate_per_s = 0.0;
  Time from{};
  Time to{};                // a rate runs in [from, to)
  Arrival arrival = Arrival::poisson;
  std::uint64_t burst = 0;  // > 0: `burst` calls at `from`; the rate is not used
  bool operator==(const ArrivalSpec&) const = default;

  // How many calls the segment makes, on average.
  double expected_calls() const;
};

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

  // The most calls of a burst made in one event.
  static constexpr std::uint64_t kBurstChunk = 4096;

  std::vector<ArrivalSpec> segments_;
  std::vector<std::uint64_t> burst_done_;  // per segment: calls of its burst made so far
  Rng& rng_;
  Sink sink_;
};

}  // namespace relaysim::sim
