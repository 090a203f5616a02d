// PeakEwma: a provider's expected response time, for routing that prefers the fastest provider
// (Finagle's and Linkerd's peak-EWMA balancer).
//
// Promises:
//  - A provider with no observation yet is estimated at `default_rtt` (tower's rule), so a new or
//    recovered provider is neither shunned nor flooded.
//  - A slower observation than the estimate replaces it at once (the peak); a faster one is
//    blended in with weight 1 - exp(-elapsed / decay), so the estimate forgets old samples by time,
//    not by count.
//  - A failure is observed as `failure_penalty`: without it a provider that fails fast would look
//    like the fastest and attract the traffic (Linkerd's documented pitfall).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/core/assert.h"
#include "model/core/bounds.h"
#include "model/core/time.h"

namespace relaysim {

struct EwmaConfig {
  Duration decay = std::chrono::seconds(10);
  Duration default_rtt = std::chrono::milliseconds(100);
  Duration failure_penalty = std::chrono::seconds(5);
  bool operator==(const EwmaConfig&) const = default;

  // The decay divides the elapsed time: it must be positive.
  static constexpr Bounds<Duration> kDecay = kPositiveDuration;
  static constexpr Bounds<Duration> kDefaultRtt = kAnyDuration;
  static constexpr Bounds<Duration> kFailurePenalty = kAnyDuration;
};

// Every field against its bounds, each error at `key`.field.
inline void validate(const EwmaConfig& c, const std::string& key, std::vector<ConfigError>& out) {
  check(c.decay, EwmaConfig::kDecay, key + ".decay", out);
  check(c.default_rtt, EwmaConfig::kDefaultRtt, key + ".default_rtt", out);
  check(c.failure_penalty, EwmaConfig::kFailurePenalty, key + ".failure_penalty", out);
}

class PeakEwma {
 public:
  explicit PeakEwma(const EwmaConfig& config) : config_(config), estimate_ns_(to_ns(config.default_rtt)) {
    RELAYSIM_ASSERT(EwmaConfig::kDecay.holds(config.decay), "the decay must be positive");
  }

  void observe(Time now, Duration rtt) {
    RELAYSIM_ASSERT(rtt >= Duration::zero(), "a response time is not negative");
    const double sample = static_cast<double>(to_ns(rtt));
    if (!seen_ || sample > estimate_ns_) {
      estimate_ns_ = sample;
    } else {
      const double elapsed = static_cast<double>(to_ns(now - last_));
      const double keep = std::exp(-std::max(0.0, elapsed) / static_cast<double>(to_ns(config_.decay)));
      estimate_ns_ = estimate_ns_ * keep + sample * (1.0 - keep);
    }
    seen_ = true;
    last_ = now;
  }
  void observe_failure(Time now) { observe(now, config_.failure_penalty); }

  // The expected response time, in nanoseconds.
  double estimate_ns() const { return estimate_ns_; }
  bool seen() const { return seen_; }

 private:
  EwmaConfig config_;
  double estimate_ns_;
  bool seen_ = false;
  Time last_{};
};

}  // namespace relaysim
