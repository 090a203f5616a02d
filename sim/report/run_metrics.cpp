#include "sim/report/run_metrics.h"

#include <algorithm>
#include <cmath>

#include "model/core/assert.h"

namespace relaysim::sim {

double RunFigures::drain_time_s() const {
  if (drains.empty()) return std::nan("");
  double longest = 0;
  for (const Drain& d : drains) longest = std::max(longest, d.seconds());
  return longest;
}

double RunFigures::latency_recovery_s() const {
  double longest = std::nan("");
  for (const Drain& d : drains) {
    const double s = d.latency_seconds();
    if (!std::isnan(s)) longest = std::isnan(longest) ? s : std::max(longest, s);
  }
  return longest;
}

std::span<const MetricInfo> run_metric_infos() { return infos_of<kRunMetrics>(); }

double run_metric_value(const RunFigures& f, std::size_t index) {
  RELAYSIM_ASSERT(index < std::size(kRunMetrics), "a run metric");
  return kRunMetrics[index].value(f);
}

double run_metric_value(const RunFigures& f, std::string_view name) {
  for (const RunMetric& m : kRunMetrics) {
    if (m.info.name == name) return m.value(f);
  }
  RELAYSIM_ASSERT(false, "a run metric by that name");
  return 0;
}

}  // namespace relaysim::sim
