// The outbox relay's report of one run: its figures, served to `expect:`, the summary and the
// JSON through the metric table.
#pragma once

#include "sim/outbox/metrics.h"
#include "sim/system.h"

namespace relaysim::sim::outbox {

class Report final : public SystemReport {
 public:
  explicit Report(Figures figures) : f_(std::move(figures)) {}

  double value(const MetricRef& m) const override { return kMetrics[m.index].value(f_, m.parameter); }
  std::uint64_t open_work() const override { return f_.unresolved; }
  void print(std::ostream& out, double wall_seconds) const override;
  void to_json(nlohmann::json& j, double wall_seconds) const override;

  const Figures& figures() const { return f_; }

 private:
  double get(std::size_t metric) const { return kMetrics[metric].value(f_, 0); }
  Figures f_;
};

}  // namespace relaysim::sim::outbox
