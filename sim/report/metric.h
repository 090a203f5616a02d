// Metrics: what a run measured, declared once per system as a table — name, unit, meaning, and
// (in the system's own table) how it is computed. Everything else is served from the table:
// validation of `expect:`, `relaysim metrics`, the JSON, the summary and the docs. Code that
// reads a metric names it through the system's compile-time lookup, so a misspelt name does not
// compile; scenario files are checked against the table when they are read.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "model/core/names.h"

namespace relaysim::sim {

enum class Unit : std::uint8_t {
  count,    // a whole number of things
  ratio,    // a fraction of something, 0 to 1, shown and written as a percentage
  seconds,  // a span of virtual time
  number,   // any other number (a mean)
};
inline constexpr auto kUnitNames = names<Unit>({
    {Unit::count, "count"}, {Unit::ratio, "ratio"}, {Unit::seconds, "seconds"}, {Unit::number, "number"}});
constexpr std::string_view to_string(Unit u) { return kUnitNames[u]; }

struct MetricInfo {
  // The name `expect:` uses. A family of metrics has "{q}" in its name, standing for a
  // percentile from 0 (exclusive) to 100: "latency_p{q}_s" is latency_p50_s, latency_p99.9_s...
  std::string_view name;
  Unit unit;
  std::string_view meaning;
};

struct MetricRef {
  static constexpr std::size_t kNoGroup = static_cast<std::size_t>(-1);
  std::size_t index = 0;   // into the table; for a group's metric, into kGroupMetrics (sim/report/groups.h)
  double parameter = 0;    // the family's q, or 0
  std::size_t group = kNoGroup;  // the group whose figure it is (an index into the system's groups), or none
};

// The metric `name` names in `table`, or nothing.
std::optional<MetricRef> find_metric(std::span<const MetricInfo> table, std::string_view name);
// Is `name` a family's name with "{q}"?
bool is_family(std::string_view name);

// A value as a person reads it, in its unit: "2619310", "99.5%", "1.25s".
std::string format_value(Unit unit, double value);

// One row of a system's metric table: what the spine sees of it, and how it is computed from the
// system's figures of a run (`q`: a family's parameter, a percentile).
template <class FiguresType>
struct MetricOf {
  using Figures = FiguresType;
  MetricInfo info;
  double (*value)(const Figures& f, double q);
};

// A system's tables (of metrics, of time-series columns) are arrays of entries with an `info` and
// however each computes its value. What the spine sees of one: the infos, in order.
template <const auto& Table>
auto infos_of() {
  using Info = std::remove_cvref_t<decltype(Table[0].info)>;
  static const auto infos = [] {
    std::array<Info, std::size(Table)> out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = Table[i].info;
    return out;
  }();
  return std::span<const Info>(infos);
}
// The metrics every run has, whatever its system (sim/report/run_metrics.h).
std::span<const MetricInfo> run_metric_infos();
// A system's metrics as `expect:`, the JSON and the docs see them: its own table's, followed by
// the run metrics (the spine computes those; SystemReport::value is asked only for its own).
template <const auto& Table>
std::span<const MetricInfo> metric_infos_of() {
  static const auto infos = [] {
    const auto own = infos_of<Table>();
    const auto run = run_metric_infos();
    std::vector<MetricInfo> out(own.begin(), own.end());
    out.insert(out.end(), run.begin(), run.end());
    return out;
  }();
  return infos;
}

// A metric's index in a system's table by name, checked when the program is compiled.
template <const auto& Table>
consteval std::size_t metric_index(std::string_view name) {
  for (std::size_t i = 0; i < std::size(Table); ++i) {
    if (Table[i].info.name == name) return i;
  }
  throw "no metric of this system has this name";
}

// The arithmetic every system's metric table computes its figures with.
namespace metric_math {
constexpr double d(std::uint64_t v) { return static_cast<double>(v); }
// Nothing to divide by is no figure at all (n/a, null in JSON), not 0%: an expectation of a ratio
// that a run never had a chance to show fails instead of passing or failing by accident.
constexpr double ratio(double a, double b) { return b == 0.0 ? std::numeric_limits<double>::quiet_NaN() : a / b; }
}  // namespace metric_math

}  // namespace relaysim::sim
