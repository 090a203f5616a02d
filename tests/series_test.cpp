// The time series, the timeline and the entity records of a run, for every system: sampling
// changes nothing, each window counts what happened in it and nothing else, and what the series
// shows obeys Little's law. And `--set` overrides, which sweeps build on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "sim/report/openmetrics.h"
#include "sim/report/series.h"
#include "sim/run.h"
#include "sim/loader.h"
#include "sim/scenario/yaml_reader.h"
#include "tests/scenario_helpers.h"

namespace relaysim::sim {
namespace {

using testing::scenario_path;

struct Rows final : SeriesSink, RecordSink {
  std::vector<SeriesWindow> windows;
  std::vector<std::vector<double>> rows;
  std::vector<EntityRecord> records;
  void row(const SeriesWindow& w, std::span<const double> values) override {
    windows.push_back(w);
    rows.emplace_back(values.begin(), values.end());
  }
  void record(const EntityRecord& r) override { records.push_back(r); }

  // The column named `name`'s values.
  std::vector<double> column(const System& system, std::string_view name) const {
    const auto cols = system.series();
    for (std::size_t c = 0; c < cols.size(); ++c) {
      if (cols[c].name != name) continue;
      std::vector<double> out;
      for (const auto& r : rows) out.push_back(r[c]);
      return out;
    }
    ADD_FAILURE() << "no column " << name;
    return {};
  }
};

RunResult run_with(const Scenario& s, Rows& rows, Duration interval) {
  RunOptions o;
  o.series = &rows;
  o.records = &rows;
  o.series_interval = interval;
  return run_scenario(s, std::move(o));
}

// One scenario of each system, with faults, so every kind of column moves.
const char* const kScenarios[] = {"endpoint-429-storm", "serviceb-url-change", "pod-crash-restart", "store-faults", "sms-provider-outage-failover",
                                  "sms-crash-compensation", "outbox-shards", "outbox-lost-acks"};

class EverySystem : public ::testing::TestWithParam<const char*> {};

TEST_P(EverySystem, SamplingChangesNothingAndWindowsAddUpToTheTotals) {
  const Scenario s = load_scenario(scenario_path(GetParam()));
  const RunResult plain = run_scenario(s);
  Rows rows;
  const RunResult sampled = run_with(s, rows, std::chrono::seconds(37));
  EXPECT_EQ(plain.fingerprint, sampled.fingerprint);
  EXPECT_EQ(plain.events, sampled.events);
  ASSERT_TRUE(sampled.pass()) << testing::failures(sampled);

  // The windows tile the run: from 0 to its end, without gaps, each but the last a whole interval.
  ASSERT_FALSE(rows.windows.empty());
  EXPECT_EQ(rows.windows.front().start, Time{});
  EXPECT_EQ(rows.windows.back().end, sampled.end);
  for (std::size_t i = 0; i < rows.windows.size(); ++i) {
    if (i > 0) {
      EXPECT_EQ(rows.windows[i].start, rows.windows[i - 1].end);
    }
    if (i + 1 < rows.windows.size()) {
      EXPECT_EQ(rows.windows[i].end - rows.windows[i].start, std::chrono::seconds(37));
    }
  }

  // A column named after a count metric is that metric over its window: the windows add up to
  // the run's total, exactly.
  const System& system = sampled.system();
  const auto metrics = system.metrics();
  int checked = 0;
  for (const SeriesColumn& c : system.series()) {
    const auto m = find_metric(metrics, c.name);
    if (!m || metrics[m->index].unit != Unit::count || c.unit != Unit::count) continue;
    double sum = 0;
    for (double v : rows.column(system, c.name)) sum += v;
    EXPECT_EQ(sum, sampled.value(m->index)) << GetParam() << ": column " << c.name;
    ++checked;
  }
  EXPECT_GE(checked, 8) << "most columns of a series are windowed counts";

  // The timeline holds the scenario's faults, and is in the run.
  EXPECT_FALSE(sampled.timeline.empty()) << GetParam() << " has faults, so its timeline has events";

  // Then each group's backlog, `pending[GROUP]`: never more in all than the work open, exactly
  // the work open where every piece is in a group (each outbox message in its shard; each webhook
  // request in its URL's group, when ServiceB has a URL for every cxid).
  const SeriesColumns columns(system, s);
  ASSERT_EQ(rows.rows.front().size(), columns.all().size());
  if (system.groups(s).size() < 2) {
    EXPECT_EQ(columns.groups(), 0u) << GetParam() << ": one group's backlog is the whole's";
    return;
  }
  ASSERT_EQ(columns.groups(), system.groups(s).size());
  const std::vector<const char*> open_columns = system.name() == "webhook" ? std::vector<const char*>{"pending", "blocked", "in_flight"}
                                                : system.name() == "outbox"  ? std::vector<const char*>{"pending", "processing"}
                                                                             : std::vector<const char*>{"pending", "in_flight", "unknown", "submitted"};
  double most = 0;
  for (std::size_t r = 0; r < rows.rows.size(); ++r) {
    double grouped = 0, open = 0;
    for (std::size_t g = 0; g < columns.groups(); ++g) grouped += rows.rows[r][columns.own() + g * columns.per_group()];
    for (const char* name : open_columns) open += rows.column(system, name)[r];
    most = std::max(most, grouped);
    if (system.name() == "outbox") {
      EXPECT_EQ(grouped, open) << GetParam() << ", row " << r;
    } else {
      EXPECT_LE(grouped, open) << GetParam() << ", row " << r;
    }
  }
  EXPECT_GT(most, 0) << GetParam() << ": some group had work open at some window's end";
  // A system's column of each group named after one of its own counts (the SMS gateway's
  // `submits[alpha]`) splits that count: the groups' add up to the whole's, window by window.
  const auto theirs = system.group_series();
  double counted = 0;
  for (std::size_t k = 0; k < theirs.size(); ++k) {
    if (!theirs[k].per_window_count) continue;
    const std::vector<double> whole = rows.column(system, theirs[k].name);
    for (std::size_t r = 0; r < rows.rows.size(); ++r) {
      double split = 0;
      for (std::size_t g = 0; g < columns.groups(); ++g) split += rows.rows[r][columns.own() + g * columns.per_group() + std::size(kGroupSeries) + k];
      EXPECT_EQ(split, whole[r]) << GetParam() << ": " << theirs[k].name << ", row " << r;
      counted += split;
    }
  }
  if (!theirs.empty()) {
    EXPECT_GT(counted, 0) << GetParam() << ": the groups' counts moved";
  }
  // The same counts give each group's drain after each fault.
  for (const Drain& d : sampled.run.drains) EXPECT_EQ(d.groups.size(), columns.groups()) << GetParam() << ": " << d.what;
}

// A provider's outage shows in its own columns: the pods' routing (error_rate) ejects it while it
// lasts, and every failover then is away from it.
TEST(Series, AProvidersOutageShowsInItsOwnColumns) {
  const Scenario s = load_scenario(scenario_path("sms-provider-outage-failover"), {parse_override("sms.platform.routing.policy=error_rate")});
  Rows rows;
  const RunResult r = run_with(s, rows, std::chrono::seconds(10));
  const SeriesColumns columns(*s.system, s);
  const auto at = std::find_if(columns.all().begin(), columns.all().end(), [](const SeriesColumn& c) { return c.name == "ejected[alpha]"; });
  ASSERT_NE(at, columns.all().end());
  const auto column = static_cast<std::size_t>(at - columns.all().begin());
  const auto failovers = static_cast<std::size_t>(
      std::find_if(columns.all().begin(), columns.all().end(), [](const SeriesColumn& c) { return c.name == "failovers[alpha]"; }) -
      columns.all().begin());
  ASSERT_LT(failovers, columns.all().size());
  const std::vector<double> whole = rows.column(*s.system, "failovers");
  double during = 0, outside = 0, away = 0;
  for (std::size_t i = 0; i < rows.rows.size(); ++i) {
    EXPECT_EQ(rows.rows[i][failovers], whole[i]) << "only alpha refuses, so every failover is away from it; row " << i;
    away += whole[i];
    const double v = rows.rows[i][column];
    EXPECT_LE(v, 3) << "at most every pod";
    const Time end = rows.windows[i].end;
    if (end > Time{} + std::chrono::minutes(3) && end <= Time{} + std::chrono::minutes(5)) during = std::max(during, v);
    // (An ejection lasts `eject_for`, 30 s, after the last refusal.)
    if (end <= Time{} + std::chrono::minutes(3) || end >= Time{} + std::chrono::minutes(6)) outside = std::max(outside, v);
  }
  EXPECT_GT(during, 0) << "alpha refuses every call from 3m to 5m: the pods eject it";
  EXPECT_EQ(outside, 0) << "and only then";
  EXPECT_GT(away, 0);
}

// OpenMetrics stamps a sample with its window's end as written: a minute is 60, not
// 60.00000000000001 (what multiplying nanoseconds by 1e-9 gives).
TEST(Series, OpenMetricsStampsAWindowsEndExactly) {
  const SeriesColumn cols[] = {{"pods_up", Unit::count, "pods"}};
  OpenMetricsSeries om(cols);
  const double three[] = {3};
  om.row({Time{}, Time{} + std::chrono::minutes(1)}, three);
  om.row({Time{} + std::chrono::minutes(1), Time{} + std::chrono::milliseconds(61'500)}, three);
  for (const double start_s : {0.0, 1'700'000'000.0}) {
    std::string text;
    om.write([&text](std::string_view piece) { text += piece; }, "webhook", "r", start_s);
    const std::string at = start_s == 0 ? "60" : "1700000060";
    EXPECT_NE(text.find("relaysim_pods_up{system=\"webhook\",run=\"r\"} 3 " + at + "\n"), std::string::npos) << text;
    EXPECT_NE(text.find("} 3 " + std::string(start_s == 0 ? "61.5" : "1700000061.5") + "\n"), std::string::npos) << text;
  }
}

// A group's column is named after it, and its name is data: quoted in the CSV header.
TEST(Series, EachGroupHasAColumnNamedAfterIt) {
  Scenario two = load_scenario(scenario_path("serviceb-outage"));
  const SeriesColumns columns((*two.system), two);
  const std::vector<std::string> groups = (*two.system).groups(two);
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_EQ(columns.all().size(), columns.own() + 2);
  EXPECT_EQ(columns.all()[columns.own()].name, "pending[" + groups[0] + "]");
  EXPECT_EQ(columns.all()[columns.own() + 1].label_value, groups[1]);
  std::ostringstream out;
  const SeriesColumn odd[] = {{"pending[a, \"b\"]", Unit::count, ""}};
  write_series_header(out, odd);
  EXPECT_EQ(out.str(), "start_s,end_s,\"pending[a, \"\"b\"\"]\"\n");
  const Scenario one = load_scenario(scenario_path("serviceb-url-change"));
  ASSERT_EQ((*one.system).groups(one).size(), 1u);
  EXPECT_EQ(SeriesColumns((*one.system), one).groups(), 0u) << "one group's backlog is the whole's";
}

INSTANTIATE_TEST_SUITE_P(Series, EverySystem, ::testing::ValuesIn(kScenarios));

// A level column is read at its window's end: the last row's backlog is what the run left open.
TEST(Series, TheLastRowsBacklogIsTheOpenWork) {
  const Scenario s = load_scenario(scenario_path("quickstart"));
  Rows rows;
  const RunResult r = run_with(s, rows, std::chrono::seconds(10));
  const System& system = r.system();
  const double open = rows.column(system, "pending").back() + rows.column(system, "blocked").back() +
                      rows.column(system, "in_flight").back();
  EXPECT_EQ(open, static_cast<double>(r.open_work()));
}

// A window is [start, end): a burst at the very instant a window ends is counted in the next one.
// The run drains at about 4m, which may be the instant a window begins: the rows still tile the
// run and add up to its totals.
TEST(Series, AWindowIsHalfOpen) {
  // A burst of 100 at exactly 2m, the start of the third 1-minute window (the file the CLI test
  // cli.series_windows_are_half_open runs too).
  const Scenario s = load_scenario(std::string(RELAYSIM_SOURCE_DIR) + "/tests/cli/burst-on-a-window-edge.yaml");
  Rows rows;
  const RunResult r = run_with(s, rows, std::chrono::minutes(1));
  EXPECT_EQ(r.fingerprint, run_scenario(s).fingerprint) << "sampling changes nothing";
  ASSERT_TRUE(r.pass()) << testing::failures(r);
  const System& system = r.system();
  const auto ingested = rows.column(system, "ingested");
  ASSERT_GE(rows.windows.size(), 3u);
  EXPECT_EQ(rows.windows[1].end, Time{} + std::chrono::minutes(2));
  EXPECT_EQ(ingested[1], 0) << "the window [1m, 2m) ends as the burst comes";
  EXPECT_EQ(ingested[2], 100) << "the window [2m, 3m) begins with the burst";
  EXPECT_EQ(rows.windows.back().end, r.end);
  for (const char* name : {"ingested", "delivered", "attempts"}) {
    double sum = 0;
    for (double v : rows.column(system, name)) sum += v;
    EXPECT_EQ(sum, r.value(find_metric(system.metrics(), name)->index)) << name;
  }
}

// Little's law, L = λW, on a steady run: the mean number of requests in the platform (sampled
// every second) is the arrival rate times the mean time a request spends there.
TEST(Series, LittlesLawHolds) {
  const Scenario s = parse_scenario(R"(
name: little
seed: 11
duration: 30m
system: webhook
webhook:
  platform: {pods: 2, concurrency_per_pod: 40}
  world:
    serviceb: {latency: {p50: 5ms, p99: 20ms}}
    endpoints: [{name: all, count: 500, latency: {p50: 200ms, p99: 2s}}]
  load: [{rate: 100/s, from: 0s, to: 30m}]
)",
                                    "little.yaml");
  Rows rows;
  const RunResult r = run_with(s, rows, std::chrono::seconds(1));
  ASSERT_TRUE(r.pass()) << testing::failures(r);
  const System& system = r.system();
  const auto pending = rows.column(system, "pending");
  const auto in_flight = rows.column(system, "in_flight");
  const auto arrivals = rows.column(system, "ingested");
  // Leave out the first and last minutes: the platform fills and empties there.
  double level = 0, arrived = 0;
  std::size_t n = 0;
  for (std::size_t i = 60; i + 60 < rows.rows.size(); ++i, ++n) {
    level += pending[i] + in_flight[i];
    arrived += arrivals[i];
  }
  const double L = level / static_cast<double>(n);
  const double lambda = arrived / static_cast<double>(n);
  const double W = r.value(find_metric(system.metrics(), "latency_mean_s")->index);
  EXPECT_NEAR(L, lambda * W, 0.05 * lambda * W) << "L " << L << ", lambda " << lambda << ", W " << W;
}

TEST(Series, EveryRecordIsARequestThatDidNotEndWell) {
  const Scenario s = load_scenario(scenario_path("flaky-endpoints-24h"));
  Rows rows;
  const RunResult r = run_with(s, rows, std::chrono::hours(1));
  const System& system = r.system();
  const auto& m = system.metrics();
  const double failed = r.value(find_metric(m, "failed")->index);
  const double dead = r.value(find_metric(m, "dead_lettered")->index);
  ASSERT_GT(failed + dead, 0) << "the scenario has requests that fail";
  EXPECT_EQ(static_cast<double>(rows.records.size()), failed + dead);
  for (const EntityRecord& e : rows.records) {
    EXPECT_TRUE(e.outcome == "failed" || e.outcome == "dead_lettered") << e.outcome;
    EXPECT_NE(e.key.find('/'), std::string::npos) << "a request is named cxid/request_id: " << e.key;
    EXPECT_LE(e.created, e.ended);
    // The endpoint group its URL points to, unless it never had one.
    EXPECT_EQ(e.group.empty(), e.reason == "no_url") << e.key << " " << e.reason << " " << e.group;
  }
}

// The SMS gateway records every message not delivered, by its business's key and the provider of
// its last attempt; the outbox relay every failed message, by shard.
TEST(Series, EverySystemRecordsWhatDidNotEndWell) {
  struct Case {
    const char* scenario;
    std::vector<Override> overrides;
    std::vector<const char*> counted;  // metrics whose sum is the number of records
    const char* group_prefix;
  };
  const Case cases[] = {
      {"sms-quickstart", {}, {"failed", "undelivered", "unconfirmed"}, ""},
      {"outbox-quickstart", {parse_override("outbox.downstream.rejection_rate=1%")}, {"failed"}, "shard-"},
  };
  for (const Case& c : cases) {
    const Scenario s = load_scenario(scenario_path(c.scenario), c.overrides);
    Rows rows;
    const RunResult r = run_with(s, rows, std::chrono::minutes(1));
    double expected = 0;
    for (const char* m : c.counted) expected += r.value(find_metric(r.system().metrics(), m)->index);
    ASSERT_GT(expected, 0) << c.scenario << " has messages that do not end well";
    EXPECT_EQ(static_cast<double>(rows.records.size()), expected) << c.scenario;
    for (const EntityRecord& e : rows.records) {
      EXPECT_FALSE(e.key.empty());
      EXPECT_NE(e.outcome, "delivered");
      EXPECT_LE(e.created, e.ended);
      EXPECT_FALSE(e.group.empty()) << c.scenario << " " << e.key << " " << e.outcome << " " << e.reason;
      EXPECT_EQ(e.group.rfind(c.group_prefix, 0), 0u) << e.group;
    }
  }
}

TEST(Series, CsvIsWhatSpreadsheetsRead) {
  std::ostringstream out;
  const SeriesColumn cols[] = {{"a", Unit::count, ""}, {"b", Unit::ratio, ""}};
  write_series_header(out, cols);
  const double values[] = {3, std::nan("")};
  write_series_row(out, {Time{} + std::chrono::seconds(60), Time{} + std::chrono::milliseconds(61'500)}, values);
  EXPECT_EQ(out.str(), "start_s,end_s,a,b\n60,61.5,3,\n");
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
}

// ---- --set --------------------------------------------------------------------------------

Scenario with(std::vector<std::string> sets) {
  std::vector<Override> o;
  for (const auto& s : sets) o.push_back(parse_override(s));
  return load_scenario(scenario_path("quickstart"), o);
}

std::string error_of(std::vector<std::string> sets) {
  try {
    with(std::move(sets));
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Set, OverridesAValueAndAddsAMissingOne) {
  const Scenario base = load_scenario(scenario_path("quickstart"));
  const Scenario s = with({"seed=99", "duration=10m"});
  EXPECT_EQ(s.seed, 99u);
  EXPECT_EQ(s.duration, std::chrono::minutes(10));
  EXPECT_NE(base.seed, 99u);
  // The same scenario written out and read back is the overridden one.
  EXPECT_EQ(with({"webhook.platform.pods=7"}).spec().processes(), 7u);
}

TEST(Set, AMisspeltKeyIsAnUnknownKeyWithASuggestion) {
  const std::string e = error_of({"webhook.platform.podz=7"});
  EXPECT_NE(e.find("webhook.platform.podz"), std::string::npos) << e;
  EXPECT_NE(e.find("pods"), std::string::npos) << e;
  EXPECT_NE(e.find("--set webhook.platform.podz=7"), std::string::npos) << e;
}

TEST(Set, ABadValueIsRefusedAsTheFileWouldBe) {
  const std::string e = error_of({"webhook.platform.pods=many"});
  EXPECT_NE(e.find("webhook.platform.pods"), std::string::npos) << e;
}

TEST(Set, PathsIntoListsAndScalarsAreChecked) {
  EXPECT_NE(error_of({"webhook.world.endpoints.9.count=3"}).find("not one of its indices"), std::string::npos);
  EXPECT_NE(error_of({"seed.x=3"}).find("single value"), std::string::npos);
  EXPECT_THROW(parse_override("no-equals-sign"), ScenarioError);
  EXPECT_THROW(parse_override("a..b=1"), ScenarioError);
  EXPECT_THROW(parse_override("=1"), ScenarioError);
  EXPECT_EQ(with({"webhook.world.endpoints.0.count=3"}).name, "quickstart");
}

}  // namespace
}  // namespace relaysim::sim
