// The SMS system's report of one run: its figures, served to `expect:`, the summary and the JSON
// through the metric table.
#pragma once

#include "sim/report_of.h"
#include "sim/sms/metrics.h"

namespace relaysim::sim::sms {

class Report final : public ReportOf<Figures, kMetrics> {
 public:
  using ReportOf::ReportOf;
  void print(std::ostream& out, double wall_seconds) const override;
  void to_json(nlohmann::json& j, double wall_seconds) const override;

 private:
  void print_requests(std::ostream& out) const;
  void print_messages(std::ostream& out) const;
  void print_sending(std::ostream& out) const;
  void print_marketing(std::ostream& out) const;
  void print_providers(std::ostream& out) const;
};

}  // namespace relaysim::sim::sms
