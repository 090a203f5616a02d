// The sweep's arithmetic: Student-t intervals, the grid, and runs.csv read back exactly.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

#include "sim/plan/stats.h"
#include "sim/plan/sweep.h"
#include "sim/scenario/yaml_reader.h"

namespace relaysim::sim {
namespace {

TEST(Estimate, StudentTIntervalOfTheMean) {
  // Five values with mean 10 and sample standard deviation sqrt(2.5); t(0.975, 4) = 2.776445.
  const double v[] = {8, 9, 10, 11, 12};
  const Estimate e = estimate(v);
  EXPECT_EQ(e.n, 5u);
  EXPECT_DOUBLE_EQ(e.mean, 10);
  EXPECT_NEAR(e.stddev, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(e.half_width(), 2.776445105 * std::sqrt(2.5) / std::sqrt(5.0), 1e-8);
  EXPECT_NEAR(e.relative_precision(), e.half_width() / 10, 1e-12);
  EXPECT_EQ(e.min, 8);
  EXPECT_EQ(e.max, 12);
}

TEST(Estimate, NotANumberIsLeftOutAndOneValueHasNoInterval) {
  const double v[] = {std::nan(""), 4, std::nan("")};
  const Estimate e = estimate(v);
  EXPECT_EQ(e.n, 1u);
  EXPECT_EQ(e.mean, 4);
  EXPECT_TRUE(std::isnan(e.ci_low));
  const double none[] = {std::nan("")};
  EXPECT_EQ(estimate(none).n, 0u);
  EXPECT_TRUE(std::isnan(estimate(none).mean));
}

TEST(Estimate, LargeCloseValuesKeepTheirSpread) {
  const double v[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};
  EXPECT_NEAR(estimate(v).stddev, 1.0, 1e-6);
}

TEST(Axis, RangesStepsAndLists) {
  EXPECT_EQ(parse_axis("a.b=2..5").values, (std::vector<std::string>{"2", "3", "4", "5"}));
  EXPECT_EQ(parse_axis("a.b=2..8:3").values, (std::vector<std::string>{"2", "5", "8"}));
  EXPECT_EQ(parse_axis("a.b=1m,5m").values, (std::vector<std::string>{"1m", "5m"}));
  EXPECT_EQ(parse_axis("a.b=[1, 2],[3]").values, (std::vector<std::string>{"[1, 2]", "[3]"}));
  EXPECT_THROW(parse_axis("a.b=5..2"), ScenarioError);
  EXPECT_THROW(parse_axis("a.b="), ScenarioError);
  EXPECT_THROW(parse_axis("a..b=1"), ScenarioError);
}

SweepPlan plan_of() {
  SweepPlan p;
  p.system = "webhook";
  p.axes = {parse_axis("x=1..3"), parse_axis("y=a,b")};
  p.replications = 2;
  p.seed = 40;
  p.metrics = {"m1", "m2"};
  return p;
}

TEST(SweepPlan, TheFirstAxisVariesSlowestAndShardsShareTheRuns) {
  SweepPlan p = plan_of();
  EXPECT_EQ(p.points(), 6u);
  EXPECT_EQ(p.runs(), 12u);
  const auto o = p.overrides(3);  // x=2, y=b
  EXPECT_EQ(o[0].value, "2");
  EXPECT_EQ(o[1].value, "b");
  EXPECT_EQ(p.seed_of(7), 41u);
  p.shards = 4;
  std::size_t owned = 0;
  for (std::uint32_t s = 1; s <= 4; ++s) {
    p.shard = s;
    for (std::size_t r = 0; r < p.runs(); ++r) owned += p.mine(r) ? 1 : 0;
  }
  EXPECT_EQ(owned, p.runs()) << "every run belongs to exactly one shard";
  EXPECT_TRUE(SweepPlan::same_sweep(p, SweepPlan::from_json(p.to_json())));
}

TEST(SweepPlan, RunsReadBackExactly) {
  const SweepPlan p = plan_of();
  std::vector<SweepRun> runs;
  for (std::size_t r = 0; r < p.runs(); ++r) runs.push_back({r, r % 3 != 0, "finished", {0.1 * static_cast<double>(r) + 1e-13, std::nan("")}});
  std::stringstream csv;
  write_runs_header(csv, p);
  for (const SweepRun& r : runs) write_run(csv, p, r);
  const std::vector<SweepRun> back = read_runs(csv, p, "runs.csv");
  ASSERT_EQ(back.size(), runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(back[i].values[0], runs[i].values[0]);
    EXPECT_TRUE(std::isnan(back[i].values[1]));
    EXPECT_EQ(back[i].pass, runs[i].pass);
  }
  const auto table = summarize(p, back);
  ASSERT_EQ(table.size(), 6u);
  EXPECT_EQ(table[1].passed, 1u);  // its runs are 2 (passed) and 3 (failed: a multiple of 3)
}

TEST(SweepPlan, ABrokenRunsFileIsNamedByLine) {
  const SweepPlan p = plan_of();
  std::stringstream csv;
  write_runs_header(csv, p);
  csv << "0,0,0,40,1,a,true,finished,1\n";
  try {
    read_runs(csv, p, "runs.csv");
    FAIL() << "a short line was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("runs.csv:2: expected 10 fields"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace relaysim::sim
