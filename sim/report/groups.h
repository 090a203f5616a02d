// What a run finished, split by the group each entity belongs to: the endpoint group of a webhook
// request, the provider of an SMS message, the shard of an outbox message. The totals say how
// much dead-lettered; the split says which part of the fleet it was, and which part is slow.
//
// A system counts into its tally as its entities reach their final states; the spine prints the
// split in the summary and writes it to the JSON (with each group's latency distribution, which
// `relaysim report` draws as a CDF).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/core/time.h"
#include "sim/report/histogram.h"
#include "model/core/metric_family.h"
#include "sim/report/metric.h"
#include "sim/report/series.h"

namespace relaysim::sim {

class GroupTally {
 public:
  // The group of an entity that belongs to none: a webhook request ServiceB has no URL for, an
  // SMS message that never reached a provider.
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  struct Row {
    std::string name;  // "(none)" for the entities of no group
    std::uint64_t finished = 0;
    std::uint64_t succeeded = 0;  // finished in the outcome the system exists for
    // How many finished in each outcome, in the order the outcomes first came.
    std::vector<std::pair<std::string_view, std::uint64_t>> outcomes;
    LatencyHistogram latency;  // as the system's own latency metrics measure it
  };

  GroupTally() = default;
  // `dimension`: what the groups are ("endpoint group", "provider", "shard"); `names`: each
  // group's, in the order the system numbers them.
  GroupTally(std::string_view dimension, const std::vector<std::string>& names);

  // An entity of `group` (an index into the names, or kNone) reached its final state: `outcome`
  // names it ("delivered", "dead_lettered": a string that lives as long as the program) and `ok`
  // says whether it is the outcome the system exists for.
  void finished(std::size_t group, std::string_view outcome, bool ok);
  // An entity of `group` took `d`: what the system's latency metrics measure.
  void latency(std::size_t group, Duration d);
  // The warm-up ends: count from zero again, in the same groups.
  void restart();

  std::string_view dimension() const { return dimension_; }
  // The group's name ("" for kNone).
  std::string_view name(std::size_t group) const;
  // Every group in the system's order, then the entities of no group (only if there were any).
  std::vector<const Row*> rows() const;
  // Every group together.
  const Row& all() const { return all_; }
  // How many groups were named, and the row of group `group` (an index into the names).
  std::size_t groups() const { return rows_.empty() ? 0 : rows_.size() - 1; }
  const Row& group(std::size_t group) const;

 private:
  Row& row(std::size_t group);

  std::string dimension_;
  std::vector<Row> rows_;  // one per group, then kNone's
  Row all_;
};

// The figures of one group, for `expect:` and `relaysim plan`: a metric of this table followed by
// the group's name in brackets, `latency_p99_s[slow]` (the group names are the system's:
// System::groups). Declared once here for every system, as the run metrics are.
struct GroupMetric {
  MetricInfo info;
  double (*value)(const GroupTally::Row& r, double q);
};

namespace detail {
double group_latency_quantile_s(const GroupTally::Row& r, double q);
}  // namespace detail

// clang-format off
inline constexpr GroupMetric kGroupMetrics[] = {
    {{"finished", Unit::count, "the group's requests or messages that reached a final state (after the warm-up)"}, [](const GroupTally::Row& r, double) { return metric_math::d(r.finished); }},
    {{"success_rate", Unit::ratio, "of them, the share that ended in the outcome the system exists for: delivered, handled"}, [](const GroupTally::Row& r, double) { return metric_math::ratio(metric_math::d(r.succeeded), metric_math::d(r.finished)); }},
    {{"latency_mean_s", Unit::seconds, "the group's latency, as the system's latency metrics measure it, mean"}, [](const GroupTally::Row& r, double) { return r.latency.mean_metric_s(); }},
    {{"latency_p{q}_s", Unit::seconds, "the group's latency, any percentile q in (0, 100]: latency_p99_s[slow]"}, [](const GroupTally::Row& r, double q) { return detail::group_latency_quantile_s(r, q); }},
    {{"latency_max_s", Unit::seconds, "the group's latency, maximum (exact)"}, [](const GroupTally::Row& r, double) { return r.latency.count() == 0 ? std::numeric_limits<double>::quiet_NaN() : to_seconds(r.latency.max()); }},
};
// clang-format on
std::span<const MetricInfo> group_metric_infos();

// "latency_p99_s[slow]": the metric's name and the group's; nothing when `name` names no group.
std::optional<std::pair<std::string_view, std::string_view>> split_group(std::string_view name);
// The value of the group metric `m` (an index into kGroupMetrics, and m.group) in the tally.
double group_metric_value(const GroupTally& t, const MetricRef& m);

// The most groups a system may have (endpoint groups; SMS providers and outbox shards have lower
// limits of their own): a piece of open work keeps its group in 15 bits (OpenWork).
inline constexpr std::size_t kMaxGroups = 0x7FFF - 2;

// The most groups a run's backlog is kept apart for: each group's column of the time series
// (kGroupSeries) and its drain after each fault (sim/report/backlog.h). A run with more has
// neither; its split of what finished (the table above) is whole.
inline constexpr std::size_t kGroupsApart = 64;

// The columns of a run's time series kept for each of its groups, after the system's own, when it
// has two to kGroupsApart: a column of this table followed by the group's name in brackets,
// `pending[slow]`, published in OpenMetrics as the family below labelled group="slow". Declared
// once here for every system (what `open` means in each: Simulation::open_by_group).
inline constexpr MetricFamily kGroupPendingFamily{"relaysim_group_pending",
                                                  "work open (acknowledged, not yet final) in one group, at the window's end"};
inline constexpr SeriesColumn kGroupSeries[] = {
    {"pending", Unit::count,
     "the group's work open at the window's end: acknowledged and not yet final (which group a piece of work is in: "
     "docs/outputs.md)",
     Panel::groups, false, &kGroupPendingFamily, "group"},
};

// The split as the summary shows it: a table, one row per group (nothing with fewer than two groups).
void print_groups(std::ostream& out, const GroupTally& t);
// The split as the JSON holds it: {"by": dimension, "all": row, "groups": [row...]}, each row with
// its counts by outcome and its latency (count, mean, p50, p99, max, and the CDF's points).
nlohmann::json groups_json(const GroupTally& t);

}  // namespace relaysim::sim
