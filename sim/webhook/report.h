// The webhook system's report of one run: its figures, served to `expect:`, the summary and the
// JSON through the metric table.
#pragma once

#include "sim/report_of.h"
#include "sim/webhook/metrics.h"

namespace relaysim::sim::webhook {

// The timeline of a run: the world's faults and changes the scenario declares (ServiceB's
// outages and URL changes, endpoints down and their incidents) and the breakers' transitions. A
// live run's judge reads it too (live/webhook/judge.h), to measure its drains as a simulated run's.
std::vector<TimelineEvent> world_timeline(const WebhookSpec& spec, const std::vector<BreakerTransition>& transitions);

class Report final : public ReportOf<Figures, kMetrics> {
 public:
  Report(Figures figures, std::vector<std::string> notes, std::vector<TimelineEvent> timeline)
      : ReportOf(std::move(figures), std::move(timeline)), notes_(std::move(notes)) {}
  void print(std::ostream& out, double wall_seconds) const override;
  void to_json(nlohmann::json& j, double wall_seconds) const override;
  std::vector<std::string> notes() const override { return notes_; }

 private:
  void print_requests(std::ostream& out) const;
  void print_serviceb(std::ostream& out) const;

  std::vector<std::string> notes_;
};

}  // namespace relaysim::sim::webhook
