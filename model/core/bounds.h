// Bounds: the range a configuration value must lie in, declared once, beside its field in the
// model's config. The model's validate() checks a configuration against it, and the scenario
// schema reads the same declaration to refuse a value outside it where the file writes it
// (file:line:column) — so a value the model would refuse, or assert on, never reaches the model,
// and the two can never disagree.
//
// Every duration has an upper bound too: the model adds and multiplies them (a lease and its
// renewals, a timeout times its retries), and a sum of 64-bit nanoseconds must not wrap.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "model/core/config_error.h"
#include "model/core/time.h"

namespace relaysim {

template <class T>
struct Bounds {
  T lo{};
  T hi{};
  bool lo_open = false;        // (lo, hi]: a value must be above lo
  const char* why = nullptr;   // said after the range: what a value outside it would do
  constexpr bool holds(const T& v) const { return (lo_open ? lo < v : !(v < lo)) && !(hi < v); }
};

// What a value must be, as a message ends: "must be between 1 and 1024", "must be between 1ms and
// 30d", "must be above 0% and at most 100%".
std::string must_text(const Bounds<std::uint64_t>& b);
std::string must_text(const Bounds<Duration>& b);
std::string must_text(const Bounds<double>& b);
// A share, shown in percent; a rate, per second.
std::string must_text_share(const Bounds<double>& b);
std::string must_text_rate(const Bounds<double>& b);

// The longest any duration may be (the scenario reader takes no longer one): ten years is far
// past any run, and the model's sums of a few stay far from the 292 years 64-bit nanoseconds
// hold. A duration the model multiplies by a count has a tighter bound of its own.
inline constexpr Duration kLongestDuration = std::chrono::hours(24 * 3650);

// validate()'s checks: a ConfigError at `key` when `v` is outside `b`.
template <class I>
void check(I v, const Bounds<I>& b, const std::string& key, std::vector<ConfigError>& out) {
  static_assert(std::is_unsigned_v<I>, "counts are unsigned");
  if (b.holds(v)) return;
  out.push_back({key, must_text(Bounds<std::uint64_t>{b.lo, b.hi, b.lo_open, b.why})});
}
void check(Duration v, const Bounds<Duration>& b, const std::string& key, std::vector<ConfigError>& out);
void check(double v, const Bounds<double>& b, const std::string& key, std::vector<ConfigError>& out);
void check_share(double v, const Bounds<double>& b, const std::string& key, std::vector<ConfigError>& out);

// A pod count and a pod's concurrency, the same in every system.
inline constexpr Bounds<std::uint32_t> kPods{1, 1024};
inline constexpr Bounds<std::uint32_t> kConcurrency{1, 100'000};
// A period a timer repeats at: shorter than a millisecond it is a busy loop, not a policy.
inline constexpr Bounds<Duration> kPeriod{std::chrono::milliseconds(1), kLongestDuration, false,
                                          "a shorter period is a busy loop"};
// A timeout the model multiplies by a count of tries (at most 100 repeats): a day is far past any
// call, and a hundred of them fit. Under a millisecond, no network answers in time: every call
// times out and is tried again, for ever (a run that only fills memory).
inline constexpr Bounds<Duration> kCallTimeout{std::chrono::milliseconds(1), std::chrono::hours(24), false,
                                               "one shorter than a millisecond fails every call"};

// The bounds most fields take.
inline constexpr Bounds<Duration> kPositiveDuration{Duration::zero(), kLongestDuration, true};
inline constexpr Bounds<Duration> kAnyDuration{Duration::zero(), kLongestDuration};
inline constexpr Bounds<double> kShare{0.0, 1.0};                   // [0%, 100%]
inline constexpr Bounds<double> kPositiveShare{0.0, 1.0, true};     // (0%, 100%]

}  // namespace relaysim
