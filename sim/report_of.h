// ReportOf: the part of a SystemReport (sim/system.h) every system writes the same way — a run's
// figures, served to `expect:` and the JSON through the system's metric table. A system's Report
// derives from it and adds its summary and JSON (and any notes).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "model/core/assert.h"
#include "sim/system.h"

namespace relaysim::sim {

// `Metrics`: the system's constexpr metric table, each row with `value(const Figures&, double)`.
template <class Figures, const auto& Metrics>
class ReportOf : public SystemReport {
 public:
  explicit ReportOf(Figures figures, std::vector<TimelineEvent> timeline = {})
      : f_(std::move(figures)), timeline_(std::move(timeline)) {}

  double value(const MetricRef& m) const override {
    RELAYSIM_ASSERT(m.index < std::size(Metrics), "the system's own metric: the spine serves the run metrics");
    return Metrics[m.index].value(f_, m.parameter);
  }
  std::uint64_t open_work() const override { return f_.unresolved; }
  void timeline(std::vector<TimelineEvent>& out) const override { out.insert(out.end(), timeline_.begin(), timeline_.end()); }

  const Figures& figures() const { return f_; }

 protected:
  double get(std::size_t metric) const {
    RELAYSIM_ASSERT(metric < std::size(Metrics), "a metric of the system's table");
    return Metrics[metric].value(f_, 0);
  }
  Figures f_;
  std::vector<TimelineEvent> timeline_;
};

}  // namespace relaysim::sim
