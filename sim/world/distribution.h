// Latency: how long simulated dependencies take — log-normal through a median and a 99th
// percentile, in virtual nanoseconds, capped at a thousand times the median.
#pragma once

#include <cstdint>
#include <vector>

#include "model/core/random.h"
#include "model/core/time.h"
#include "sim/report/series.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/schema.h"

namespace relaysim::sim {

struct LatencySpec {
  Duration p50 = std::chrono::milliseconds(50);
  Duration p99 = std::chrono::milliseconds(200);
  bool operator==(const LatencySpec&) const = default;
};

// {p50, p99}: p99 defaults to p50 (a constant latency) and is never below it.
const Schema<LatencySpec>& latency_schema();

class Latency {
 public:
  explicit Latency(const LatencySpec& spec);
  Duration sample(Rng& rng) const;

 private:
  double mu_;     // ln(p50 in ns)
  double sigma_;  // ln(p99 / p50) / z(0.99)
  double cap_;    // the longest latency drawn, in ns
};

// A window of virtual time as a scenario writes it: {at, for}; without `for` it never ends.
const Schema<Window>& window_schema();

// A simulated dependency's outage: `error` answers every call with an error at once (a refused
// connection); `timeout` never answers, so each call costs its caller a whole timeout.
enum class OutageMode : std::uint8_t { error, timeout };
struct Outage {
  Window window;
  OutageMode mode = OutageMode::error;
  bool operator==(const Outage&) const = default;
};
// {at, for, mode}
const Schema<Outage>& outage_schema();

// A window in which a simulated dependency is slower: its latency × factor.
struct Slowdown {
  Window window;
  double factor = 10.0;
  bool operator==(const Slowdown&) const = default;
};
// {at, for, factor}
const Schema<Slowdown>& slowdown_schema();
// The factor in force at `t`: 1 outside every window, the largest where windows overlap.
double slowdown_at(const std::vector<Slowdown>& slowdowns, Time t);

// A dependency's outages and slowdowns on a run's timeline, as `subject` ("serviceb").
void add_to_timeline(const std::vector<Outage>& outages, std::string_view subject, std::vector<TimelineEvent>& out);
void add_to_timeline(const std::vector<Slowdown>& slowdowns, std::string_view subject, std::vector<TimelineEvent>& out);

}  // namespace relaysim::sim
