// The one place that lists the systems relaysim simulates. A new system implements sim/system.h
// in its own folder and adds one line here (docs/architecture.md). Also: a metric's name looked up
// in a system's metrics, or in the metrics every system's groups have.
#include "sim/system.h"

#include <algorithm>

#include "sim/outbox/system.h"
#include "sim/report/violation_metrics.h"
#include "sim/sms/system.h"
#include "sim/webhook/system.h"

namespace relaysim::sim {

std::span<const System* const> systems() {
  static const System* const kSystems[] = {&webhook::system(), &sms::system(), &outbox::system()};
  return kSystems;
}

std::vector<SeriesColumn> group_columns(const System& system) {
  std::vector<SeriesColumn> out(std::begin(kGroupSeries), std::end(kGroupSeries));
  for (const SeriesColumn& c : system.group_series()) out.push_back(c);
  return out;
}

SeriesColumns::SeriesColumns(const System& system, const Scenario& s) {
  const auto own = system.series();
  own_ = own.size();
  columns_.assign(own.begin(), own.end());
  const std::vector<std::string> names = system.groups(s);
  if (names.size() < 2 || names.size() > kGroupsApart) return;
  groups_ = names.size();
  std::vector<SeriesColumn> each = group_columns(system);
  for (std::size_t k = std::size(kGroupSeries); k < each.size(); ++k) {
    // In OpenMetrics, a family for the system's column, each group's a sample labelled group="NAME".
    SeriesColumn& c = each[k];
    RELAYSIM_ASSERT(c.family == nullptr, "a system's group column is named relaysim_group_<column>");
    c.family = &families_.emplace_back(MetricFamily{text_.emplace_back("relaysim_group_" + std::string(c.name)), c.meaning});
    c.label_name = "group";
  }
  per_group_ = each.size();
  for (const std::string& group : names) {
    for (SeriesColumn c : each) {
      c.name = text_.emplace_back(std::string(c.name) + "[" + group + "]");
      c.label_value = text_.emplace_back(group);
      columns_.push_back(c);
    }
  }
}

const System* find_system(std::string_view name) {
  for (const System* s : systems()) {
    if (s->name() == name) return s;
  }
  return nullptr;
}

namespace {
std::string joined(const std::vector<std::string>& words) {
  std::string all;
  for (const std::string& w : words) all += (all.empty() ? "" : ", ") + w;
  return all;
}
std::vector<std::string> names_of(std::span<const MetricInfo> table) {
  std::vector<std::string> out;
  for (const MetricInfo& m : table) out.emplace_back(m.name);
  return out;
}
}  // namespace

std::optional<MetricRef> resolve_metric(const Scenario& s, std::string_view name, std::string& problem) {
  RELAYSIM_ASSERT(s.system != nullptr && s.has_spec(), "a scenario with its system's section");
  const System& system = *s.system;
  const auto split = split_group(name);
  if (!split) {
    if (auto ref = find_metric(system.metrics(), name)) return ref;
    const std::vector<std::string> names = names_of(system.metrics());
    problem = "unknown metric" + Reader::suggestion(name, names) + " (expected one of: " + joined(names) +
              "; or a group's figure such as latency_p99_s[" + std::string(system.group_dimension()) + "])";
    if (name.ends_with("_violations")) problem += "; " + std::string(kViolationsNaming);
    return std::nullopt;
  }
  const auto [base, group] = *split;
  std::optional<MetricRef> ref = find_metric(group_metric_infos(), base);
  if (!ref) {
    const std::vector<std::string> names = names_of(group_metric_infos());
    problem = "'" + std::string(base) + "' is not a figure of a group" + Reader::suggestion(base, names) + " (a group has: " + joined(names) + ")";
    return std::nullopt;
  }
  const std::vector<std::string> groups = system.groups(s);
  const auto at = std::find(groups.begin(), groups.end(), group);
  if (at == groups.end()) {
    problem = "no " + std::string(system.group_dimension()) + " is named '" + std::string(group) + "'" + Reader::suggestion(group, groups) +
              " (this scenario's: " + joined(groups) + ")";
    return std::nullopt;
  }
  ref->group = static_cast<std::size_t>(at - groups.begin());
  return ref;
}

const MetricInfo& metric_info(const System& system, const MetricRef& m) {
  const std::span<const MetricInfo> table = m.group == MetricRef::kNoGroup ? system.metrics() : group_metric_infos();
  RELAYSIM_ASSERT(m.index < table.size(), "a metric of the table");
  return table[m.index];
}

}  // namespace relaysim::sim
