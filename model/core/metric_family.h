// MetricFamily: a figure's name and help text in the OpenMetrics exposition format, declared once
// for both shells: the live service serves it at /metrics, and a simulated run writes its time
// series under it (series.om, sim/report/openmetrics.h), so one dashboard reads either.
#pragma once

#include <string_view>

namespace relaysim {

struct MetricFamily {
  std::string_view name;  // without a counter's `_total`
  std::string_view help;
};

}  // namespace relaysim
