// The outbox relay's report of one run: its figures, served to `expect:`, the summary and the
// JSON through the metric table.
#pragma once

#include "sim/report_of.h"
#include "sim/outbox/metrics.h"

namespace relaysim::sim::outbox {

class Report final : public ReportOf<Figures, kMetrics> {
 public:
  using ReportOf::ReportOf;
  void print(std::ostream& out, double wall_seconds) const override;
  void to_json(nlohmann::json& j, double wall_seconds) const override;
};

}  // namespace relaysim::sim::outbox
