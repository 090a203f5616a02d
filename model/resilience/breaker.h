// CircuitBreaker: failure-rate breaker over a sliding time window.
//
// Promises:
//  - Below `min_calls` results in the window it never opens.
//  - Permits are taken when a call is admitted. Each permit carries the breaker generation it was
//    admitted under; every state change starts a new generation, and a result from an older
//    generation changes nothing (a slow call admitted before the breaker opened cannot re-trip or
//    close it later).
//  - Open rejects everything until `open_for` has passed; then half-open admits at most
//    `half_open_probes` calls at a time. Any probe failure reopens; `half_open_probes` successes
//    close. A probe abandoned without a result (release) frees its slot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/bounds.h"
#include "model/core/function.h"
#include "model/core/lifecycle.h"
#include "model/core/names.h"
#include "model/core/time.h"
#include "model/resilience/window_counter.h"

namespace relaysim {

struct BreakerConfig {
  Duration window = std::chrono::seconds(30);
  std::uint32_t min_calls = 20;
  double failure_rate = 0.5;  // opens when failures / calls >= this
  Duration open_for = std::chrono::seconds(30);
  std::uint32_t half_open_probes = 3;
  bool operator==(const BreakerConfig&) const = default;

  static constexpr Bounds<Duration> kWindow = kPositiveDuration;
  static constexpr Bounds<std::uint32_t> kMinCalls{1, 1'000'000};
  static constexpr Bounds<double> kFailureRate = kPositiveShare;
  static constexpr Bounds<Duration> kOpenFor = kPositiveDuration;
  static constexpr Bounds<std::uint32_t> kHalfOpenProbes{1, 10'000};
};

// Every field against its bounds, each error at `key`.field ("platform.serviceb_breaker.window").
void validate(const BreakerConfig& c, const std::string& key, std::vector<ConfigError>& out);

enum class BreakerState : std::uint8_t { closed, open, half_open };
inline constexpr auto kBreakerStateNames = names<BreakerState>({
    {BreakerState::closed, "closed"}, {BreakerState::open, "open"}, {BreakerState::half_open, "half_open"}});
constexpr std::string_view to_string(BreakerState s) { return kBreakerStateNames[s]; }

// The breaker's lifecycle (model/core/lifecycle.h): every move transition() makes is one of these.
inline constexpr Move<BreakerState> kBreakerLifecycle[] = {
    {std::nullopt, BreakerState::closed, "a process starts"},
    {BreakerState::closed, BreakerState::open, "failures in the window reach failure_rate (with min_calls)"},
    {BreakerState::open, BreakerState::half_open, "open_for has passed"},
    {BreakerState::half_open, BreakerState::closed, "half_open_probes probes succeeded"},
    {BreakerState::half_open, BreakerState::open, "a probe failed"},
};

struct Permit {
  bool admitted = false;
  std::uint64_t generation = 0;
};

class CircuitBreaker {
 public:
  using OnChange = InplaceFunction<void(BreakerState from, BreakerState to, Time at), 32>;

  explicit CircuitBreaker(const BreakerConfig& config, OnChange on_change = {});

  Permit acquire(Time now);
  void record(const Permit& permit, bool success, Time now);
  void release(const Permit& permit);

  // Whether acquire(now) would refuse: open before open_for has passed, or half-open with every
  // probe taken. Changes nothing.
  bool refuses(Time now) const;
  // While open, when it will admit probes again; otherwise std::nullopt.
  std::optional<Time> open_until() const;

  BreakerState state() const { return state_; }
  std::uint64_t generation() const { return generation_; }
  std::uint32_t probes_in_flight() const { return probes_in_flight_; }

 private:
  void transition(BreakerState to, Time now);

  BreakerConfig config_;
  OnChange on_change_;
  BreakerState state_ = BreakerState::closed;
  std::uint64_t generation_ = 1;
  Time open_until_{};
  std::uint32_t probes_in_flight_ = 0;
  std::uint32_t probe_successes_ = 0;
  WindowCounter window_;
};

}  // namespace relaysim
