// Latency distributions: each samples what its moments say (checked as Ciw checks its samplers,
// the observed mean and variance against the theoretical ones), reads and writes back as
// written, and refuses what is not one distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "sim/loader.h"
#include "sim/writer.h"
#include "sim/scenario/yaml_reader.h"
#include "sim/webhook/spec.h"
#include "sim/world/distribution.h"
#include "sim/world/zipf.h"

namespace relaysim::sim {
namespace {

// A webhook scenario whose endpoints answer after `latency`.
std::string scenario_with(const std::string& latency) {
  return "name: d\nduration: 1h\nsystem: webhook\nwebhook:\n  world:\n    endpoints: [{name: e, count: 2, latency: " + latency +
         "}]\n  load: [{rate: 1/s, from: 0s, to: 1m}]\n";
}

LatencySpec latency_of(const std::string& latency, const std::string& file = "/tmp/d.yaml") {
  const Scenario s = parse_scenario(scenario_with(latency), file);
  return dynamic_cast<const webhook::WebhookSpec&>(s.spec()).endpoints.at(0).latency;
}

std::string error_of(const std::string& latency) {
  try {
    latency_of(latency);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

struct Observed {
  double mean_s = 0;
  double scv = 0;
};
Observed observe(const LatencySpec& spec, int n = 200'000) {
  const Latency l(spec);
  Rng rng(42);
  double sum = 0, squares = 0;
  for (int i = 0; i < n; ++i) {
    const double v = to_seconds(l.sample(rng));
    sum += v;
    squares += v * v;
  }
  const double mean = sum / n;
  return {mean, (squares / n - mean * mean) / (mean * mean)};
}

class Shapes : public ::testing::TestWithParam<const char*> {};

TEST_P(Shapes, SamplesHaveTheDistributionsMoments) {
  const LatencySpec spec = latency_of(GetParam());
  const LatencyMoments want = moments(spec);
  const Observed got = observe(spec);
  EXPECT_NEAR(got.mean_s, want.mean_s, 0.01 * want.mean_s + 1e-9) << GetParam();
  EXPECT_NEAR(got.scv, want.scv, 0.03 * want.scv + 0.002) << GetParam();
}

TEST_P(Shapes, ReadsBackAsWritten) {
  const Scenario s = parse_scenario(scenario_with(GetParam()), "/tmp/d.yaml");
  const std::string text = write_scenario(s);
  const Scenario again = parse_scenario(text, "/tmp/d.yaml");
  EXPECT_EQ(write_scenario(again), text);
  EXPECT_TRUE(dynamic_cast<const webhook::WebhookSpec&>(again.spec()).endpoints.at(0).latency ==
              dynamic_cast<const webhook::WebhookSpec&>(s.spec()).endpoints.at(0).latency)
      << text;
}

INSTANTIATE_TEST_SUITE_P(Latency, Shapes,
                         ::testing::Values("{p50: 80ms, p99: 400ms}", "{p50: 80ms}", "{constant: 200ms}", "{exponential: 200ms}",
                                           "{gamma: {mean: 200ms, shape: 0.5}}", "{gamma: {mean: 1s, shape: 9}}",
                                           "{erlang: {mean: 200ms, k: 4}}", "{uniform: {min: 100ms, max: 300ms}}",
                                           "{mixture: [{weight: 9, exponential: 100ms}, {weight: 1, constant: 2s}]}"));

TEST(Latency, AHeavyLogNormalTailReadsBack) {
  const LatencySpec spec = latency_of("{p50: 80ms, p99: 1s}");
  EXPECT_EQ(spec.p99, std::chrono::seconds(1));
  EXPECT_NEAR(moments(spec).scv, std::expm1(std::pow(std::log(12.5) / 2.3263478740408408, 2)), 1e-12);
}

TEST(Latency, ExponentialIsWhatErlangCAssumes) {
  const LatencyMoments m = moments(latency_of("{exponential: 250ms}"));
  EXPECT_DOUBLE_EQ(m.mean_s, 0.25);
  EXPECT_DOUBLE_EQ(m.scv, 1.0);
  EXPECT_DOUBLE_EQ(moments(latency_of("{constant: 3s}")).scv, 0.0);
  EXPECT_DOUBLE_EQ(moments(latency_of("{erlang: {mean: 1s, k: 4}}")).scv, 0.25);
}

TEST(Latency, EmpiricalDrawsTheFilesSamples) {
  {
    std::ofstream f("/tmp/relaysim-samples.txt");
    f << "# measured\n0.1\n250ms\n\n0.4\n";
  }
  const LatencySpec spec = latency_of("{empirical: relaysim-samples.txt}", "/tmp/d.yaml");
  ASSERT_EQ(spec.samples->size(), 3u);
  const Latency l(spec);
  Rng rng(1);
  for (int i = 0; i < 100; ++i) {
    const Duration d = l.sample(rng);
    EXPECT_TRUE(d == std::chrono::milliseconds(100) || d == std::chrono::milliseconds(250) || d == std::chrono::milliseconds(400));
  }
  EXPECT_NEAR(moments(spec).mean_s, 0.25, 1e-12);
  {
    std::ofstream f("/tmp/relaysim-bad-samples.txt");
    f << "0.1\nsoon\n";
  }
  EXPECT_NE(error_of("{empirical: relaysim-bad-samples.txt}").find("relaysim-bad-samples.txt:2: expected a latency"), std::string::npos);
  EXPECT_NE(error_of("{empirical: no-such-file.txt}").find("no file of samples"), std::string::npos);
}

TEST(Latency, OneDistributionAtATime) {
  EXPECT_NE(error_of("{p50: 1s, exponential: 1s}").find("only one of"), std::string::npos);
  EXPECT_NE(error_of("{}").find("needs one of"), std::string::npos);
  EXPECT_NE(error_of("{p99: 1s}").find("needs two of p50, p90, p99 and mean"), std::string::npos);
  EXPECT_NE(error_of("{erlang: {mean: 1s, k: 2.5}}").find("whole number"), std::string::npos);
  EXPECT_NE(error_of("{uniform: {min: 2s, max: 1s}}").find("must not be below min"), std::string::npos);
  EXPECT_NE(error_of("{exponential: 0s}").find("must be positive"), std::string::npos);
  EXPECT_NE(error_of("{mixture: []}").find("at least one part"), std::string::npos);
  EXPECT_NE(error_of("{mixture: [{weight: 1, mixture: []}]}").find("unknown key"), std::string::npos);
  EXPECT_NE(error_of("{weight: 2, p50: 1s}").find("unknown key"), std::string::npos) << "weight belongs to a mixture's part";
}

// The figures operators know: any two of p50, p90, p99 and mean give the log-normal through them,
// kept as its p50 and p99.
TEST(Latency, ALogNormalIsFittedThroughAnyTwoFigures) {
  const auto near = [](Duration a, double expected_s) { return std::abs(to_seconds(a) / expected_s - 1) < 1e-6; };
  // sigma = ln(2)/z90 from p50 1s and p90 2s: p99 = e^(z99 sigma).
  LatencySpec l = latency_of("{p50: 1s, p90: 2s}");
  EXPECT_TRUE(near(l.p50, 1.0));
  EXPECT_TRUE(near(l.p99, std::exp(2.3263478740408408 * std::log(2.0) / 1.2815515655446004)));
  // And back: the p90 of that one, with its p99, gives the same p50.
  l = latency_of("{p90: 2s, p99: " + std::to_string(to_seconds(l.p99)) + "s}");
  EXPECT_TRUE(near(l.p50, 1.0));
  // p50 and mean: mean = p50 e^(sigma^2 / 2).
  l = latency_of("{p50: 100ms, mean: 200ms}");
  EXPECT_NEAR(moments(l).mean_s, 0.2, 1e-6);
  // p99 and mean: the fitted log-normal has that mean and that p99.
  l = latency_of("{p99: 2s, mean: 200ms}");
  EXPECT_TRUE(near(l.p99, 2.0));
  EXPECT_NEAR(moments(l).mean_s, 0.2, 1e-6);
  // What a rewritten scenario says: p50 and p99, which read back as the same latency.
  EXPECT_EQ(latency_of("{p50: " + std::to_string(to_seconds(l.p50)) + "s, p99: 2s}").p99, l.p99);
}

TEST(Latency, AFitNoLogNormalHasIsRefused) {
  // A p99 of 2s allows a mean of 2s / e^(z99^2 / 2) = 133.7ms at least.
  EXPECT_NE(error_of("{p99: 2s, mean: 100ms}").find("has a mean of at least 0.133s"), std::string::npos) << error_of("{p99: 2s, mean: 100ms}");
  EXPECT_NE(error_of("{p50: 1s, mean: 500ms}").find("a log-normal's mean is at least its median"), std::string::npos);
  EXPECT_NE(error_of("{p50: 1s, p90: 500ms}").find("must not be below p50"), std::string::npos);
  EXPECT_NE(error_of("{p50: 1s, p90: 2s, p99: 3s}").find("two parameters"), std::string::npos);
  EXPECT_NE(error_of("{mean: 1s}").find("needs two of"), std::string::npos);
  EXPECT_NE(error_of("{p50: 1ms, mean: 1h}").find("at most 1000 times its p50"), std::string::npos);
  EXPECT_NE(error_of("{p90: 0s, mean: 1s}").find("must be positive"), std::string::npos);
}

// Zipf's law by rejection-inversion: the share of each rank is 1 / (k^s H(n, s)).
TEST(Zipf, RanksComeAsOftenAsTheLawSays) {
  for (const double s : {0.5, 1.0, 1.5}) {
    constexpr std::uint64_t n = 50;
    double harmonic = 0;
    for (std::uint64_t k = 1; k <= n; ++k) harmonic += std::pow(static_cast<double>(k), -s);
    const Zipf zipf(n, s);
    Rng rng(7);
    std::vector<double> seen(n + 1, 0);
    constexpr int kDraws = 200'000;
    for (int i = 0; i < kDraws; ++i) {
      const std::uint64_t k = zipf.draw(rng);
      ASSERT_TRUE(k >= 1 && k <= n);
      seen[k] += 1.0 / kDraws;
    }
    for (const std::uint64_t k : {1, 2, 10, 50}) {
      const double p = std::pow(static_cast<double>(k), -s) / harmonic;
      EXPECT_NEAR(seen[k], p, 5 * std::sqrt(p / kDraws)) << "s " << s << ", rank " << k;
    }
  }
}

}  // namespace
}  // namespace relaysim::sim
