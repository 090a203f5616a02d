// Small text helpers the summaries share: printf-style formatting into a string, and a count as
// the metric tables print it.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "sim/report/metric.h"

namespace relaysim::sim {

// printf into a string (at most 255 characters: one summary line).
template <class... Args>
std::string fmt(const char* format, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

// A count (an estimate is rounded to the nearest whole thing).
inline std::string format_count(double v) { return format_value(Unit::count, std::round(v)); }

}  // namespace relaysim::sim
