#include "model/core/time.h"

#include <cmath>
#include <cstdio>

namespace relaysim {

Duration scale(Duration d, double factor) {
  const double ns = static_cast<double>(d.count()) * factor;
  if (!(ns < 9.0e18)) return Duration{INT64_MAX};  // also catches NaN
  if (ns < -9.0e18) return Duration{INT64_MIN};
  return Duration{static_cast<std::int64_t>(std::llround(ns))};
}

std::string format_duration(Duration d) {
  std::int64_t ns = d.count();
  std::string out;
  if (ns < 0) {
    out.push_back('-');
    ns = -ns;
  }
  if (ns > 0 && ns < 1'000) return out + std::to_string(ns) + "ns";  // not "1e-06ms"
  if (ns < 1'000'000) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3gms", static_cast<double>(ns) / 1e6);
    return out + buf;
  }
  const std::int64_t ms_total = ns / 1'000'000;
  const std::int64_t h = ms_total / 3'600'000;
  const std::int64_t m = (ms_total / 60'000) % 60;
  const std::int64_t s = (ms_total / 1000) % 60;
  const std::int64_t ms = ms_total % 1000;
  char buf[64];
  if (h > 0) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm%02lld.%03llds", static_cast<long long>(h),
                  static_cast<long long>(m), static_cast<long long>(s), static_cast<long long>(ms));
  } else if (m > 0) {
    std::snprintf(buf, sizeof buf, "%lldm%02lld.%03llds", static_cast<long long>(m),
                  static_cast<long long>(s), static_cast<long long>(ms));
  } else {
    std::snprintf(buf, sizeof buf, "%lld.%03llds", static_cast<long long>(s), static_cast<long long>(ms));
  }
  return out + buf;
}

std::string write_duration(Duration d) {
  const std::int64_t ns = d.count();
  if (ns == 0) return "0s";
  struct Unit {
    std::int64_t ns;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86'400'000'000'000, "d"}, {3'600'000'000'000, "h"}, {60'000'000'000, "m"},
                                    {1'000'000'000, "s"},      {1'000'000, "ms"},         {1'000, "us"}};
  for (const Unit& u : kUnits) {
    if (ns % u.ns == 0) return std::to_string(ns / u.ns) + u.name;
  }
  return std::to_string(ns) + "ns";
}

}  // namespace relaysim
