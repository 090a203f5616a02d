// Latency: how long simulated dependencies take. A latency is one of several distributions,
// written as the one key that names it:
//   {p50: 80ms, p99: 1s}                  log-normal through a median and a 99th percentile
//                                         (capped at 1000 times the median); {p50: 5ms}: constant
//   {p99: 2s, mean: 200ms}                the same, fitted through any two of p50, p90, p99 and
//                                         mean (the figures operators know), kept as p50 and p99
//   {constant: 200ms}                     always the same
//   {exponential: 200ms}                  exponential with this mean (M/M/c's service)
//   {gamma: {mean: 200ms, shape: 0.5}}    gamma; shape 1 is exponential, large is nearly constant
//   {erlang: {mean: 200ms, k: 4}}         Erlang-k: gamma with a whole shape
//   {uniform: {min: 100ms, max: 300ms}}
//   {empirical: latencies.txt}            drawn from a file of samples (one per line: 0.25, 250ms),
//                                         relative to the scenario file
//   {mixture: [{weight: 0.9, p50: 80ms}, {weight: 0.1, exponential: 2s}]}
// so that a pipeline can be configured as M/M/c, M/D/c or G/G/c. All in virtual nanoseconds,
// drawn from the caller's Rng with relaysim's own algorithms (model/core/random.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/core/random.h"
#include "model/core/time.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/schema.h"

namespace relaysim::sim {

enum class LatencyShape : std::uint8_t { lognormal, constant, exponential, gamma, uniform, empirical, mixture };

struct LatencySpec {
  Duration p50 = std::chrono::milliseconds(50);   // lognormal (first, so that {p50, p99} makes one)
  Duration p99 = std::chrono::milliseconds(200);  // lognormal
  // Figures a log-normal may be given by instead, as read (zero: not given); the fit turns them
  // into p50 and p99 and clears them, so a latency has one form however it was written.
  Duration fit_p90{}, fit_mean{};
  LatencyShape shape = LatencyShape::lognormal;
  Duration mean{};                                // constant (its value), exponential, gamma
  double gamma_shape = 1.0;                       // gamma (a whole number for erlang)
  bool erlang = false;                            // written as erlang: {mean, k}
  Duration min{}, max{};                          // uniform
  std::string file{};                             // empirical: as written
  std::shared_ptr<const std::vector<std::int64_t>> samples{};  // empirical: nanoseconds, read from `file`
  std::vector<LatencySpec> mixture{};             // mixture: its parts
  double weight = 1.0;                            // as a part of a mixture
  bool operator==(const LatencySpec& o) const;
};

// Every latency key: one of p50 (with p99), constant, exponential, gamma, erlang, uniform,
// empirical or mixture.
Codec<LatencySpec> latency_codec();

// The mean and the squared coefficient of variation (variance / mean²) of a latency, in seconds,
// for the queueing formulas (Erlang C, Kingman). The log-normal's cap is ignored.
struct LatencyMoments {
  double mean_s = 0;
  double scv = 0;
};
LatencyMoments moments(const LatencySpec& spec);

class Latency {
 public:
  explicit Latency(const LatencySpec& spec);
  Duration sample(Rng& rng) const;

 private:
  LatencyShape shape_;
  double a_ = 0;  // lognormal: mu; constant, exponential, gamma: mean in ns; uniform: min in ns
  double b_ = 0;  // lognormal: sigma; gamma: shape; uniform: max in ns
  double cap_ = 0;  // lognormal: the longest latency drawn, in ns
  std::shared_ptr<const std::vector<std::int64_t>> samples_;
  std::vector<Latency> parts_;
  std::vector<double> cumulative_;  // mixture: the parts' weights, summed and scaled to 1
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

}  // namespace relaysim::sim
