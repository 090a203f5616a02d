#include "cli/outputs.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/result_dir.h"
#include "model/core/assert.h"
#include "sim/writer.h"

namespace relaysim::cli {

namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::optional<std::string> open_file(std::ofstream& out, const fs::path& p) {
  out.open(p, std::ios::out | std::ios::trunc);
  if (!out) return "--timeseries: cannot write " + p.string();
  return std::nullopt;
}

}  // namespace

constexpr std::initializer_list<const char*> kRunFiles = {"series.csv", "series.om", "timeline.csv", "records.csv", "result.json", "scenario.yaml"};

std::vector<std::string> RunOutputs::files_of(const std::string& path) {
  if (ends_with(path, ".csv")) return {path};
  std::vector<std::string> out;
  for (const char* f : kRunFiles) out.push_back((fs::path(path) / f).string());
  return out;
}

std::optional<std::string> RunOutputs::open(const std::string& path, const sim::Scenario& as_run, double start_s) {
  if (path.empty()) return "--timeseries needs a path: a .csv file, or a directory for every output";
  RELAYSIM_ASSERT(as_run.system != nullptr, "a scenario names its system");
  columns_ = std::make_unique<sim::SeriesColumns>(*as_run.system, as_run);
  path_ = path;
  start_s_ = start_s;
  directory_ = !ends_with(path, ".csv");
  if (!directory_) {
    if (auto problem = open_file(series_, path)) return problem;
  } else {
    if (auto problem = prepare_result_dir(path, kRunFiles, "run")) {
      return "--timeseries: " + *problem + (problem->find("is a file") != std::string::npos
                                                 ? " for every output, or a path ending in .csv for the time series alone"
                                                 : "");
    }
    if (auto problem = open_file(series_, fs::path(path) / "series.csv")) return problem;
    if (auto problem = open_file(records_, fs::path(path) / "records.csv")) return problem;
    sim::write_record_header(records_);
    openmetrics_.emplace(columns_->all());
  }
  sim::write_series_header(series_, columns_->all());
  return std::nullopt;
}

void RunOutputs::row(const sim::SeriesWindow& window, std::span<const double> values) {
  RELAYSIM_ASSERT(series_.is_open(), "the time series is opened before the run");
  sim::write_series_row(series_, window, values);
  if (openmetrics_) openmetrics_->row(window, values);
}

void RunOutputs::record(const sim::EntityRecord& r) {
  RELAYSIM_ASSERT(directory_ && records_.is_open(), "records go to a result directory opened before the run");
  sim::write_record(records_, r);
}

std::optional<std::string> RunOutputs::finish(const sim::RunResult& result, const sim::WallStats& wall) {
  series_.close();
  if (!series_) return "cannot write the time series to " + path_;
  if (!directory_) return std::nullopt;
  records_.close();
  if (!records_) return "cannot write " + (fs::path(path_) / "records.csv").string();
  std::ostringstream timeline;
  sim::write_timeline(timeline, result.timeline);
  if (auto problem = write_text(fs::path(path_) / "timeline.csv", timeline.str())) return problem;
  RELAYSIM_ASSERT(openmetrics_.has_value() && result.scenario.system != nullptr, "a result directory has its OpenMetrics series");
  // Written a piece at a time: at a short interval over a long run, the text is too big to hold.
  const auto write_om = [&](const TextWriter& write) {
    openmetrics_->write([&write](std::string_view piece) { write(piece); }, result.scenario.system->name(), result.scenario.name, start_s_);
  };
  if (auto problem = write_pieces(fs::path(path_) / "series.om", write_om)) return problem;
  if (auto problem = write_text(fs::path(path_) / "result.json", sim::json_text(sim::to_json(result, wall)) + "\n")) return problem;
  return write_text(fs::path(path_) / "scenario.yaml", sim::write_scenario(result.scenario));
}

}  // namespace relaysim::cli
