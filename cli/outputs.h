// What `relaysim run --timeseries PATH` writes besides the summary: with a PATH ending in .csv,
// the time series alone; otherwise PATH is a result directory (made if it does not exist) holding
//   series.csv     the time series, a row per window (docs/outputs.md has every column)
//   series.om      the same series in OpenMetrics text, for Prometheus and Grafana
//   timeline.csv   faults, crashes, breaker transitions, leader terms: what happened when
//   records.csv    every entity that did not end well: key, outcome, reason, attempts, times
//   result.json    the run's result, as --json writes it
//   scenario.yaml  the scenario as run (seed, store and --set applied)
// which `relaysim report DIR` reads.
#pragma once

#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "sim/report/openmetrics.h"
#include "sim/report/series.h"
#include "sim/summary.h"
#include "sim/run.h"
#include "sim/system.h"

namespace relaysim::cli {

class RunOutputs final : public sim::SeriesSink, public sim::RecordSink {
 public:
  // The files `--timeseries path` writes: path itself when it ends in .csv, else the directory's.
  static std::vector<std::string> files_of(const std::string& path);
  // Opens everything the run will write as it goes; says what is wrong when it cannot.
  // `start_s`: the Unix time series.om stamps the run's start with.
  // `as_run`: the scenario the run runs, whose groups have columns of their own.
  std::optional<std::string> open(const std::string& path, const sim::Scenario& as_run, double start_s = 0);
  bool directory() const { return directory_; }

  void row(const sim::SeriesWindow& window, std::span<const double> values) override;
  void record(const sim::EntityRecord& r) override;

  // Writes what is known only at the end; says what went wrong, if anything did.
  std::optional<std::string> finish(const sim::RunResult& result, const sim::WallStats& wall);

 private:
  std::string path_;
  bool directory_ = false;
  std::ofstream series_;
  std::ofstream records_;
  std::unique_ptr<sim::SeriesColumns> columns_;      // the series', once opened
  std::optional<sim::OpenMetricsSeries> openmetrics_;  // in a result directory
  double start_s_ = 0;
};

}  // namespace relaysim::cli
