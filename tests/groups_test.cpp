// The split of a run's finished work by group — endpoint group, provider, shard: on a tally fed
// by hand, and on whole runs of every system, where the groups must add up to the system's own
// totals and latency figures.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "sim/report/groups.h"
#include "sim/summary.h"
#include "sim/run.h"
#include "sim/loader.h"
#include "tests/scenario_helpers.h"

namespace relaysim::sim {
namespace {

using std::chrono::milliseconds;

TEST(Groups, CountEachGroupAndTheWhole) {
  GroupTally t("provider", {"alpha", "beta"});
  t.finished(0, "delivered", true);
  t.finished(0, "undelivered", false);
  t.finished(1, "delivered", true);
  t.finished(GroupTally::kNone, "failed", false);
  t.latency(0, milliseconds(100));
  t.latency(1, milliseconds(300));
  const auto rows = t.rows();
  ASSERT_EQ(rows.size(), 3u) << "both groups, then the entities of none";
  EXPECT_EQ(rows[0]->name, "alpha");
  EXPECT_EQ(rows[0]->finished, 2u);
  EXPECT_EQ(rows[0]->succeeded, 1u);
  EXPECT_EQ(rows[2]->name, "(none)");
  EXPECT_EQ(t.name(GroupTally::kNone), "");
  EXPECT_EQ(t.name(1), "beta");
  EXPECT_EQ(t.all().finished, 4u);
  EXPECT_EQ(t.all().succeeded, 2u);
  EXPECT_EQ(t.all().latency.count(), 2u);
  EXPECT_EQ(t.all().outcomes.size(), 3u);
}

TEST(Groups, LeaveOutTheGrouplessWhenThereAreNone) {
  GroupTally t("shard", {"shard-0", "shard-1"});
  t.finished(1, "handled", true);
  const auto rows = t.rows();
  ASSERT_EQ(rows.size(), 2u) << "a group with nothing finished still shows; (none) does not";
  EXPECT_EQ(rows[0]->finished, 0u);
}

TEST(Groups, PrintATableOnlyWhenThereIsASplit) {
  std::ostringstream one;
  print_groups(one, GroupTally("shard", {"shard-0"}));
  EXPECT_EQ(one.str(), "") << "one group is the totals again";
  GroupTally t("endpoint group", {"fast", "slow"});
  t.finished(0, "delivered", true);
  t.finished(1, "dead_lettered", false);
  std::ostringstream two;
  print_groups(two, t);
  EXPECT_NE(two.str().find("By endpoint group"), std::string::npos) << two.str();
  EXPECT_NE(two.str().find("dead_lettered"), std::string::npos) << two.str();
}

TEST(Groups, WriteTheLatencyDistributionAsACdf) {
  GroupTally t("endpoint group", {"fast"});
  for (int ms = 1; ms <= 1000; ++ms) {
    t.finished(0, "delivered", true);
    t.latency(0, milliseconds(ms));
  }
  const nlohmann::json j = groups_json(t);
  EXPECT_EQ(j["by"], "endpoint group");
  const nlohmann::json& cdf = j["groups"][0]["latency"]["cdf"];
  ASSERT_GT(cdf.size(), 10u);
  double last_s = 0, last_f = 0;
  for (const auto& p : cdf) {
    EXPECT_GT(p[0].get<double>(), last_s) << "edges rise";
    EXPECT_GT(p[1].get<double>(), last_f) << "fractions rise";
    last_s = p[0].get<double>();
    last_f = p[1].get<double>();
  }
  EXPECT_DOUBLE_EQ(last_f, 1.0);
  EXPECT_DOUBLE_EQ(last_s, 1.0) << "the last edge is the maximum";
  EXPECT_EQ(j["groups"][0]["success_rate"], 1.0);
}

struct GroupCase {
  const char* scenario;
  const char* dimension;
  const char* success;  // the system's count of what succeeded
};

class EverySystemsGroups : public ::testing::TestWithParam<GroupCase> {};

TEST_P(EverySystemsGroups, AddUpToTheSystemsOwnFigures) {
  const GroupCase& c = GetParam();
  const Scenario s = load_scenario(testing::scenario_path(c.scenario));
  const RunResult r = run_scenario(s);
  ASSERT_TRUE(r.pass()) << testing::failures(r);
  const GroupTally& t = r.groups;
  EXPECT_EQ(t.dimension(), c.dimension);
  ASSERT_GE(t.rows().size(), 2u) << c.scenario << " has more than one group";
  std::uint64_t finished = 0, succeeded = 0, timed = 0;
  for (const GroupTally::Row* row : t.rows()) {
    finished += row->finished;
    succeeded += row->succeeded;
    timed += row->latency.count();
  }
  EXPECT_EQ(finished, r.run.work.finished) << "every final state is counted in one group";
  EXPECT_EQ(finished, t.all().finished);
  EXPECT_EQ(timed, t.all().latency.count());
  const auto metrics = r.system().metrics();
  const auto get = [&](const char* name) {
    const std::optional<MetricRef> m = find_metric(metrics, name);
    EXPECT_TRUE(m) << name;
    return m ? r.metric(*m) : std::nan("");
  };
  EXPECT_EQ(static_cast<double>(succeeded), get(c.success));
  EXPECT_NEAR(t.all().latency.mean_seconds(), get("latency_mean_s"), 1e-9) << "the groups time what the system's metrics do";
  EXPECT_DOUBLE_EQ(to_seconds(t.all().latency.quantile(0.99)), get("latency_p99_s"));
  const nlohmann::json j = to_json(r, WallStats{});
  EXPECT_EQ(j["groups"]["groups"].size(), t.rows().size());
  EXPECT_EQ(j["groups"]["all"]["finished"], finished);

  // Each group's figures, named as expect: and plan --target name them, are its row's.
  const std::vector<std::string> names = s.system->groups(s);
  ASSERT_EQ(names.size(), t.groups()) << "the system names the groups its runs count in";
  for (std::size_t g = 0; g < names.size(); ++g) {
    const GroupTally::Row& row = t.group(g);
    EXPECT_EQ(row.name, names[g]);
    const auto figure = [&](const std::string& metric) {
      std::string problem;
      const std::optional<MetricRef> m = resolve_metric(s, metric + "[" + names[g] + "]", problem);
      EXPECT_TRUE(m) << problem;
      return m ? r.metric(*m) : std::nan("");
    };
    EXPECT_EQ(figure("finished"), static_cast<double>(row.finished));
    if (row.finished > 0) {
      EXPECT_DOUBLE_EQ(figure("success_rate"), static_cast<double>(row.succeeded) / static_cast<double>(row.finished));
    }
    if (row.latency.count() > 0) {
      EXPECT_DOUBLE_EQ(figure("latency_p99_s"), to_seconds(row.latency.quantile(0.99)));
      EXPECT_DOUBLE_EQ(figure("latency_p99.9_s"), to_seconds(row.latency.quantile(0.999)));
      EXPECT_DOUBLE_EQ(figure("latency_max_s"), to_seconds(row.latency.max()));
    } else {
      EXPECT_TRUE(std::isnan(figure("latency_mean_s"))) << "no latency is no figure, not zero";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Groups, EverySystemsGroups,
                         ::testing::Values(GroupCase{"flaky-endpoints-24h", "endpoint group", "delivered"},
                                           GroupCase{"sms-provider-outage-failover", "provider", "delivered"},
                                           GroupCase{"outbox-shards", "shard", "handled"}),
                         [](const auto& param) {
                           std::string name = param.param.scenario;
                           for (char& ch : name) ch = ch == '-' ? '_' : ch;
                           return name;
                         });

}  // namespace
}  // namespace relaysim::sim
