#include "sim/report/groups.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>

#include "model/core/assert.h"
#include "sim/report/text.h"

namespace relaysim::sim {

namespace {

constexpr std::string_view kNoGroup = "(none)";

void count(GroupTally::Row& r, std::string_view outcome, bool ok) {
  ++r.finished;
  if (ok) ++r.succeeded;
  // An outcome's name is nearly always the same static text (an enum's name) as last time: its
  // address settles the question before its letters are compared.
  for (auto& [name, n] : r.outcomes) {
    if (name.data() == outcome.data() && name.size() == outcome.size()) {
      ++n;
      return;
    }
  }
  for (auto& [name, n] : r.outcomes) {
    if (name == outcome) {
      ++n;
      return;
    }
  }
  r.outcomes.emplace_back(outcome, 1);
}

std::uint64_t outcome_count(const GroupTally::Row& r, std::string_view outcome) {
  for (const auto& [name, n] : r.outcomes) {
    if (name == outcome) return n;
  }
  return 0;
}

std::string latency_text(const LatencyHistogram& h, double q) {
  return h.count() == 0 ? "-" : format_value(Unit::seconds, to_seconds(h.quantile(q)));
}

nlohmann::json row_json(const GroupTally::Row& r) {
  using nlohmann::json;
  json outcomes = json::object();
  for (const auto& [name, n] : r.outcomes) outcomes[std::string(name)] = n;
  const LatencyHistogram& h = r.latency;
  json latency = {{"count", h.count()}};
  if (h.count() > 0) {
    json cdf = json::array();
    for (const LatencyHistogram::CdfPoint& p : h.cdf()) cdf.push_back({p.seconds, p.fraction});
    latency["mean_s"] = h.mean_seconds();
    latency["p50_s"] = to_seconds(h.quantile(0.5));
    latency["p99_s"] = to_seconds(h.quantile(0.99));
    latency["max_s"] = to_seconds(h.max());
    latency["cdf"] = std::move(cdf);
  }
  return {{"name", r.name},
          {"finished", r.finished},
          {"succeeded", r.succeeded},
          {"success_rate", r.finished == 0 ? json(nullptr) : json(static_cast<double>(r.succeeded) / static_cast<double>(r.finished))},
          {"outcomes", std::move(outcomes)},
          {"latency", std::move(latency)}};
}

}  // namespace

GroupTally::GroupTally(std::string_view dimension, const std::vector<std::string>& names) : dimension_(dimension) {
  rows_.resize(names.size() + 1);
  for (std::size_t i = 0; i < names.size(); ++i) rows_[i].name = names[i];
  rows_.back().name = kNoGroup;
  all_.name = "all";
}

void GroupTally::restart() {
  const auto empty = [](Row& r) {
    std::string name = std::move(r.name);
    r = Row{};
    r.name = std::move(name);
  };
  for (Row& r : rows_) empty(r);
  empty(all_);
}

const GroupTally::Row& GroupTally::group(std::size_t group) const {
  RELAYSIM_ASSERT(group + 1 < rows_.size(), "a group of the tally");
  return rows_[group];
}

double detail::group_latency_quantile_s(const GroupTally::Row& r, double q) {
  RELAYSIM_ASSERT(q > 0 && q <= 100, "a percentile is in (0, 100]");
  if (r.latency.count() == 0) return std::numeric_limits<double>::quiet_NaN();
  return to_seconds(r.latency.quantile(q / 100.0));
}

std::span<const MetricInfo> group_metric_infos() { return infos_of<kGroupMetrics>(); }

std::optional<std::pair<std::string_view, std::string_view>> split_group(std::string_view name) {
  const std::size_t open = name.find('[');
  if (open == std::string_view::npos || name.back() != ']') return std::nullopt;
  return std::pair{name.substr(0, open), name.substr(open + 1, name.size() - open - 2)};
}

double group_metric_value(const GroupTally& t, const MetricRef& m) {
  RELAYSIM_ASSERT(m.index < std::size(kGroupMetrics) && m.group != MetricRef::kNoGroup, "a group metric of a group");
  // A plan probing fewer shards or providers than the group's index: the group is not in this run.
  if (m.group >= t.groups()) return std::numeric_limits<double>::quiet_NaN();
  return kGroupMetrics[m.index].value(t.group(m.group), m.parameter);
}

GroupTally::Row& GroupTally::row(std::size_t group) {
  RELAYSIM_ASSERT(!rows_.empty(), "a tally with its groups named");
  RELAYSIM_ASSERT(group == kNone || group + 1 < rows_.size(), "a group of the tally");
  return group == kNone ? rows_.back() : rows_[group];
}

void GroupTally::finished(std::size_t group, std::string_view outcome, bool ok) {
  RELAYSIM_ASSERT(!outcome.empty(), "an outcome has a name");
  count(row(group), outcome, ok);
  count(all_, outcome, ok);
}

void GroupTally::latency(std::size_t group, Duration d) {
  row(group).latency.add(d);
  all_.latency.add(d);
}

std::string_view GroupTally::name(std::size_t group) const {
  if (group == kNone) return {};
  RELAYSIM_ASSERT(group + 1 < rows_.size(), "a group of the tally");
  return rows_[group].name;
}

std::vector<const GroupTally::Row*> GroupTally::rows() const {
  std::vector<const Row*> out;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    const Row& r = rows_[i];
    if (i + 1 < rows_.size() || r.finished > 0 || r.latency.count() > 0) out.push_back(&r);
  }
  return out;
}

void print_groups(std::ostream& out, const GroupTally& t) {
  const std::vector<const GroupTally::Row*> rows = t.rows();
  if (rows.size() < 2) return;
  out << "By " << t.dimension() << "\n";
  std::vector<std::string_view> outcomes;
  for (const auto& [name, n] : t.all().outcomes) outcomes.push_back(name);
  std::vector<std::string> header{std::string(t.dimension()), "finished"};
  for (std::string_view o : outcomes) header.emplace_back(o);
  for (const char* h : {"succeeded", "latency p50", "p99", "mean"}) header.emplace_back(h);
  std::vector<std::vector<std::string>> table{header};
  for (const GroupTally::Row* r : rows) {
    std::vector<std::string> line{r->name, format_count(static_cast<double>(r->finished))};
    for (std::string_view o : outcomes) line.push_back(format_count(static_cast<double>(outcome_count(*r, o))));
    line.push_back(r->finished == 0 ? "-" : format_value(Unit::ratio, static_cast<double>(r->succeeded) / static_cast<double>(r->finished)));
    line.push_back(latency_text(r->latency, 0.5));
    line.push_back(latency_text(r->latency, 0.99));
    line.push_back(r->latency.count() == 0 ? "-" : format_value(Unit::seconds, r->latency.mean_seconds()));
    table.push_back(std::move(line));
  }
  std::vector<std::size_t> widths(header.size(), 0);
  for (const auto& line : table) {
    for (std::size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], line[c].size());
  }
  for (const auto& line : table) {
    out << "  " << line[0] << std::string(widths[0] - line[0].size(), ' ');
    for (std::size_t c = 1; c < line.size(); ++c) out << "  " << std::string(widths[c] - line[c].size(), ' ') << line[c];
    out << "\n";
  }
  out << "\n";
}

nlohmann::json groups_json(const GroupTally& t) {
  nlohmann::json groups = nlohmann::json::array();
  for (const GroupTally::Row* r : t.rows()) groups.push_back(row_json(*r));
  return {{"by", t.dimension()}, {"all", row_json(t.all())}, {"groups", std::move(groups)}};
}

}  // namespace relaysim::sim
