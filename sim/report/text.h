// Small text helpers the summaries share: printf-style formatting into a string (model/core/text.h),
// and a count as the metric tables print it.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "model/core/text.h"
#include "sim/report/metric.h"

namespace relaysim::sim {

using relaysim::fmt;  // model/core/text.h

// A count (an estimate is rounded to the nearest whole thing).
inline std::string format_count(double v) { return format_value(Unit::count, std::round(v)); }

}  // namespace relaysim::sim
