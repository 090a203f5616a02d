// The webhook system's report of one run: its figures, served to `expect:`, the summary and the
// JSON through the metric table.
#pragma once

#include "sim/system.h"
#include "sim/webhook/metrics.h"

namespace relaysim::sim::webhook {

class Report final : public SystemReport {
 public:
  Report(Figures figures, std::vector<std::string> notes) : f_(std::move(figures)), notes_(std::move(notes)) {}

  double value(const MetricRef& m) const override { return kMetrics[m.index].value(f_, m.parameter); }
  std::uint64_t open_work() const override { return f_.unresolved; }
  void print(std::ostream& out, double wall_seconds) const override;
  void to_json(nlohmann::json& j, double wall_seconds) const override;
  std::vector<std::string> notes() const override { return notes_; }

  const Figures& figures() const { return f_; }

 private:
  double get(std::size_t metric) const { return kMetrics[metric].value(f_, 0); }
  Figures f_;
  std::vector<std::string> notes_;
};

}  // namespace relaysim::sim::webhook
