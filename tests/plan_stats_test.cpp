// The sweep's arithmetic: Student-t intervals, the grid, and runs.csv read back exactly.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "model/core/random.h"
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

Duration secs(double s) { return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s)); }

TEST(Histogram, EncodesMergesAndRanksExactly) {
  LatencyHistogram a, b, both;
  for (int i = 1; i <= 300; ++i) {
    (i % 3 == 0 ? a : b).add(secs(0.01 * i));
    both.add(secs(0.01 * i));
  }
  const auto back = LatencyHistogram::decode(a.encode());
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->same_counts(a)) << a.encode();
  EXPECT_TRUE(std::isnan(back->mean_seconds())) << "the sum is not in the file";
  LatencyHistogram merged = a;
  merged.merge(b);
  EXPECT_EQ(merged.count(), both.count());
  EXPECT_EQ(merged.max(), both.max());
  for (std::uint64_t k = 1; k <= both.count(); k += 7) EXPECT_EQ(merged.at_rank(k), both.at_rank(k)) << k;
  EXPECT_EQ(both.at_rank(both.count()), secs(3.0));
  EXPECT_EQ(both.quantile(0.5), both.at_rank(150));
  for (const char* bad : {"", "x", "-5", "5 3", "5 3:0", "5 4:1 3:1", "5 99999:1", "5 3:1,", "5  3:1", "5 3:1 "}) {
    EXPECT_FALSE(LatencyHistogram::decode(bad)) << "'" << bad << "'";
  }
}

TEST(Histogram, ReadsEveryQuantileWithinABucketOfTheTrueOne) {
  Rng rng(7);
  LatencyHistogram h;
  std::vector<Duration> all;
  for (int i = 0; i < 100'000; ++i) {
    all.push_back(secs(rng.exponential(1.0)));
    h.add(all.back());
  }
  std::sort(all.begin(), all.end());
  for (const double q : {0.1, 0.5, 0.8, 0.9, 0.99, 0.999}) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(all.size())));
    const double truth = to_seconds(all[rank - 1]);
    EXPECT_NEAR(to_seconds(h.quantile(q)), truth, truth * LatencyHistogram::kResolution) << q;
  }
  // Two durations 3 % apart no longer share a bucket, and one repeated duration reads exactly.
  LatencyHistogram a, b, same;
  for (int i = 0; i < 10; ++i) {
    a.add(secs(299.8));
    b.add(secs(309.2));
    same.add(secs(0.25));
  }
  EXPECT_LT(a.quantile(0.8), b.quantile(0.8));
  EXPECT_EQ(same.quantile(0.5), secs(0.25));
  EXPECT_LE(LatencyHistogram::bucket_width(secs(300.0)), secs(300.0 * LatencyHistogram::kResolution));
}

// How often the interval holds the true quantile of exponential durations (mean 1s).
double coverage(std::size_t runs, std::size_t per_run, double q) {
  Rng rng(42);
  const double truth = -std::log(1 - q);
  int held = 0;
  constexpr int kTrials = 400;
  for (int trial = 0; trial < kTrials; ++trial) {
    LatencyHistogram pooled;
    std::vector<double> own;
    for (std::size_t r = 0; r < runs; ++r) {
      LatencyHistogram run;
      for (std::size_t i = 0; i < per_run; ++i) run.add(secs(rng.exponential(1.0)));
      own.push_back(to_seconds(run.quantile(q)));
      pooled.merge(run);
    }
    const TailEstimate t = tail_estimate(pooled, own, q);
    EXPECT_EQ(t.independent, runs == 1);
    held += t.ci_low <= truth && truth <= t.ci_high ? 1 : 0;
  }
  return static_cast<double>(held) / kTrials;
}

TEST(TailEstimate, HoldsTheTrueQuantileAboutAsOftenAsItSays) {
  // (Without the bucket's width, sectioning over ten runs of 2 000 holds it 71 % of the time: the
  // runs' own p99s fall in one or two buckets and understate their spread.)
  EXPECT_GE(coverage(10, 500, 0.99), 0.93) << "sectioning over ten runs";
  EXPECT_GE(coverage(10, 2000, 0.99), 0.93) << "sectioning over ten runs";
  EXPECT_GE(coverage(1, 5000, 0.99), 0.93) << "order statistics of one run";
  EXPECT_GE(coverage(1, 5000, 0.5), 0.93) << "order statistics of one run, the median";
}

TEST(TailEstimate, SaysHowManySamplesLieBeyondTheQuantile) {
  LatencyHistogram h;
  for (int i = 1; i <= 1000; ++i) h.add(secs(i));
  const double own[] = {std::nan("")};
  const TailEstimate p99 = tail_estimate(h, own, 0.99);
  EXPECT_EQ(p99.samples, 1000u);
  EXPECT_EQ(p99.beyond, 10u);
  EXPECT_TRUE(p99.enough());
  EXPECT_EQ(p99.method(), "order statistics");
  const TailEstimate p999 = tail_estimate(h, own, 0.999);
  EXPECT_EQ(p999.beyond, 1u);
  EXPECT_FALSE(p999.enough());
  EXPECT_TRUE(std::isinf(p999.ci_high)) << "nothing bounds p99.9 of a thousand samples from above";
  const double two[] = {900, 1000};
  const TailEstimate s = tail_estimate(h, two, 0.99);
  EXPECT_EQ(s.method(), "sectioning");
  EXPECT_EQ(s.runs, 2u);
  const double bucket = to_seconds(LatencyHistogram::bucket_width(secs(s.value)));
  EXPECT_NEAR(s.ci_high - s.value, std::hypot(12.7062047 * std::sqrt(5000.0) / std::sqrt(2.0), bucket), 1e-3)
      << "t(0.975, 1) times the runs' spread / sqrt(2), and the histogram's resolution";
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
  const auto table = summarize(p, back, {});
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
