// Virtual time.
//
// Time is an int64 count of nanoseconds since the start of a run, carried in std::chrono types so
// that units are checked by the compiler. The model never asks the operating system for the time:
// it reads a Clock port, which the simulator drives virtually and the live shell maps onto
// std::chrono::steady_clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace relaysim {

// A clock type for std::chrono only: it has no now(), because "now" comes from the Clock port.
struct VirtualClock {
  using rep = std::int64_t;
  using period = std::nano;
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<VirtualClock>;
  static constexpr bool is_steady = true;
};

using Duration = std::chrono::nanoseconds;
using Time = VirtualClock::time_point;

inline constexpr Time kTimeZero{};
inline constexpr Time kTimeNever{Duration{INT64_MAX}};

constexpr std::int64_t to_ns(Time t) { return t.time_since_epoch().count(); }
constexpr std::int64_t to_ns(Duration d) { return d.count(); }
constexpr Time time_from_ns(std::int64_t ns) { return Time{Duration{ns}}; }
constexpr double to_seconds(Duration d) { return static_cast<double>(d.count()) * 1e-9; }
constexpr double to_seconds(Time t) { return to_seconds(t.time_since_epoch()); }

// Scales a duration by a real factor, saturating instead of overflowing.
Duration scale(Duration d, double factor);

// "1h02m03.5s"-style rendering for summaries and error messages.
std::string format_duration(Duration d);
inline std::string format_time(Time t) { return format_duration(t.time_since_epoch()); }
// A duration as a scenario writes it, in the largest unit that states it exactly: "2h", "90s",
// "1500ms", "7ns" (the scenario reader reads it back as the same duration).
std::string write_duration(Duration d);

}  // namespace relaysim
