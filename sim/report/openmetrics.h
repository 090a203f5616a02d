// A run's time series in the OpenMetrics text format (openmetrics.io), beside series.csv: what
// Prometheus's tools read (`promtool tsdb create-blocks-from openmetrics` loads it into a
// Prometheus that Grafana reads; docs/outputs.md).
//
// One metric family per column (SeriesColumn): a count per window becomes a counter, whose
// `_total` sample is the running total at each window's end; any other column a gauge, its value
// for the window. Each sample carries the labels system="webhook" and run="<scenario name>", and
// is stamped with its window's end: the run's start is `start_s` seconds of Unix time (0 unless
// given: virtual time has no date). Columns that name a family the live service also serves
// (relaysim_requests{status="pending"}) are written into it, so one dashboard reads a simulated
// run and the live service alike. A window with no value (nothing finished, for a latency) is a
// gauge's NaN; OpenMetrics wants every family's samples together, so the rows are kept until the
// end.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/report/series.h"

namespace relaysim::sim {

class OpenMetricsSeries final : public SeriesSink {
 public:
  explicit OpenMetricsSeries(std::span<const SeriesColumn> columns) : columns_(columns) {}

  void row(const SeriesWindow& window, std::span<const double> values) override;

  // Every family, then `# EOF`, handed to `emit` a piece of about a mebibyte at a time (a long
  // series at a short interval is hundreds of megabytes of text). `system` and `run` are data:
  // written as escaped label values.
  using Emit = std::function<void(std::string_view)>;
  void write(const Emit& emit, std::string_view system, std::string_view run, double start_s) const;

 private:
  std::span<const SeriesColumn> columns_;
  std::vector<double> ends_s_;  // each window's end, seconds of virtual time
  std::vector<double> values_;  // row by row
};

// A label value (or a HELP text) as OpenMetrics writes it: backslash, double quote and line feed
// escaped.
std::string openmetrics_label_value(std::string_view text);

}  // namespace relaysim::sim
