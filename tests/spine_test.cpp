// The generic spine, without any system: event buses, the ledger, the due-work queue, retention,
// processes, arrivals, metric tables, comparisons and the schema machinery.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "model/core/coordinator.h"  // the ports no system uses yet: compiled here so they stay sound
#include "model/core/events.h"
#include "model/core/random.h"
#include "model/store/due_queue.h"
#include "model/store/retention.h"
#include "sim/oracle/ledger.h"
#include "sim/report/metric.h"
#include "sim/report/violation_metrics.h"
#include "sim/scenario/expect.h"
#include "sim/scenario/schema.h"
#include "sim/world/arrivals.h"
#include "sim/world/distribution.h"
#include "sim/world/process.h"

namespace relaysim::sim {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// ---- events -----------------------------------------------------------------------------------

struct Ping {
  int n;
  void mix(Fingerprint& fp) const { fp.mix(static_cast<std::uint64_t>(n)); }
};
struct Pong {
  int n;  // not fingerprinted
};
using Bus = EventBus<Ping, Pong>;

struct PingCounter final : SinkFor<Ping> {
  std::vector<int> seen;
  void on(const Ping& p) override { seen.push_back(p.n); }
};
struct Both final : SinkFor<Ping>, SinkFor<Pong> {
  std::vector<int> seen;
  void on(const Ping& p) override { seen.push_back(p.n); }
  void on(const Pong& p) override { seen.push_back(-p.n); }
};

TEST(EventBus, DeliversEachEventToItsSinksInAttachOrder) {
  Bus bus;
  PingCounter pings;
  Both both;
  bus.attach(both);
  bus.attach(pings);
  bus.emit(Ping{1});
  bus.emit(Pong{2});
  bus.emit(Ping{3});
  EXPECT_EQ(pings.seen, (std::vector<int>{1, 3}));
  EXPECT_EQ(both.seen, (std::vector<int>{1, -2, 3}));
}

TEST(EventBus, TheFingerprintTakesEveryFingerprintedEventAndNothingElse) {
  auto run = [](bool with_pong, int last) {
    Bus bus;
    Fingerprint fp;
    FingerprintSink<Bus> sink(fp);
    bus.attach(sink);
    bus.emit(Ping{1});
    if (with_pong) bus.emit(Pong{7});
    bus.emit(Ping{last});
    return fp.value();
  };
  EXPECT_EQ(run(false, 2), run(true, 2));  // a Pong leaves no trace
  EXPECT_NE(run(false, 2), run(false, 3));
}

// ---- ledger -----------------------------------------------------------------------------------

TEST(Ledger, CountsEveryViolationAndKeepsTheFirstFewOfEach) {
  static constexpr InvariantInfo kTable[] = {{"X-one", "first"}, {"X-two", "second"}};
  Ledger l(kTable);
  for (int i = 0; i < 30; ++i) l.violate(0, Time{} + seconds(i), "thing " + std::to_string(i), "broke");
  l.violate(1, Time{} + seconds(99), "", "also broke");
  EXPECT_EQ(l.count(0), 30u);
  EXPECT_EQ(l.count(1), 1u);
  EXPECT_EQ(l.total(), 31u);
  EXPECT_EQ(l.examples().size(), Ledger::kExamplesKept + 1);
  EXPECT_EQ(l.describe(l.examples().front()), "X-one at 0ms thing 0: broke");
  EXPECT_EQ(l.describe(l.examples().back()), "X-two at 1m39.000s: also broke");
}

// ---- DueQueue and Retention -------------------------------------------------------------------

// A queue against a std::set of (time, id): random sets, moves and removes, in lanes and the heap.
TEST(DueQueue, AlwaysFrontsTheEarliestThenTheLowestId) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<std::uint32_t> places(64, DueQueue<int>::kNowhere);
    struct Places {
      std::vector<std::uint32_t>* p;
      std::uint32_t& operator()(std::uint32_t slot) const { return (*p)[slot]; }
    };
    DueQueue<Places> q{Places{&places}};
    std::map<std::uint32_t, std::pair<Time, std::uint64_t>> where;  // slot -> (at, id)
    std::set<std::pair<Time, std::uint64_t>> model;
    Rng rng(seed);
    Time lane_a{}, lane_b{}, lane_c{};
    for (int step = 0; step < 2000; ++step) {
      const auto slot = static_cast<std::uint32_t>(rng.below(64));
      const std::uint64_t id = slot + 1;
      if (auto it = where.find(slot); it != where.end()) {
        model.erase(it->second);
        where.erase(it);
      }
      const std::uint64_t op = rng.below(5);
      if (op == 0) {
        q.remove(slot);
      } else {
        // Lanes get times that mostly grow, as a store's do; the heap any time at all.
        Time at = Time{} + seconds(static_cast<std::int64_t>(rng.below(1000)));
        DueLane lane = DueLane::none;
        if (op == 1) {
          lane_a += seconds(static_cast<std::int64_t>(rng.below(3)));
          at = lane_a;
          lane = DueLane::a;
        } else if (op == 2) {
          lane_b += seconds(static_cast<std::int64_t>(rng.below(3)));
          at = lane_b;
          lane = DueLane::b;
        } else if (op == 3) {
          lane_c += seconds(static_cast<std::int64_t>(rng.below(3)));
          at = lane_c;
          lane = DueLane::c;
        }
        q.set(slot, id, at, lane);
        where[slot] = {at, id};
        model.insert({at, id});
      }
      const auto* front = q.front();
      if (model.empty()) {
        ASSERT_EQ(front, nullptr);
      } else {
        ASSERT_NE(front, nullptr);
        ASSERT_EQ(std::make_pair(front->at, front->id), *model.begin()) << "seed " << seed << " step " << step;
      }
    }
  }
}

TEST(Retention, ForgetsInTheOrderThingsFinishedOnceTheirTimeHasCome) {
  Retention forever(std::nullopt);
  forever.finished(Time{}, 1, 0);
  forever.expire(Time{} + std::chrono::hours(1000), [](const Retention::Finished&) { FAIL() << "forever forgets nothing"; });
  Retention r(seconds(10));
  r.finished(Time{} + seconds(1), 7, 0);
  r.finished(Time{} + seconds(2), 8, 1);
  std::vector<std::uint64_t> forgotten;
  r.expire(Time{} + seconds(11), [&](const Retention::Finished& f) { forgotten.push_back(f.id); });
  EXPECT_EQ(forgotten, (std::vector<std::uint64_t>{7}));
  r.expire(Time{} + seconds(12), [&](const Retention::Finished& f) { forgotten.push_back(f.id); });
  EXPECT_EQ(forgotten, (std::vector<std::uint64_t>{7, 8}));
}

// ---- processes --------------------------------------------------------------------------------

struct Host final : ProcessHost {
  std::vector<std::string> log;
  void start(Process& p) override { log.push_back("start " + std::to_string(p.index())); }
  void stop(Process& p) override { log.push_back("stop " + std::to_string(p.index())); }
};
struct Lifecycle final : SinkFor<ProcessStarted>, SinkFor<ProcessCrashed> {
  int started = 0, crashed = 0;
  void on(const ProcessStarted&) override { ++started; }
  void on(const ProcessCrashed&) override { ++crashed; }
};

TEST(Processes, ACrashedIncarnationIsOwedNothingButARestartRunsAgain) {
  Kernel k;
  Host host;
  ProcessEvents events;
  Lifecycle life;
  events.attach(life);
  Processes ps(k, 2, host, events);
  ps.start_all();
  ps.install({CrashFault{Time{} + seconds(5), 1, seconds(10)}});
  int fired = 0, answered = 0;
  k.at(Time{} + seconds(1), [&] {
    ps[1].schedule_at(Time{} + seconds(7), [&] { ++fired; });  // set before the crash: never fires
    ps[1].after(seconds(8), [&] { ++answered; });               // an answer owed to it: dropped
    ps[0].after(seconds(8), [&] { ++answered; });               // pod 0 lives: delivered
  });
  k.at(Time{} + seconds(16), [&] { ps[1].after(seconds(1), [&] { ++answered; }); });  // after the restart
  k.run_until(Time{} + seconds(60));
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(answered, 2);
  EXPECT_EQ(host.log, (std::vector<std::string>{"start 0", "start 1", "stop 1", "start 1"}));
  EXPECT_EQ(life.started, 3);
  EXPECT_EQ(life.crashed, 1);
}

TEST(Processes, RoutesRoundRobinOverThoseThatAreUp) {
  Kernel k;
  Host host;
  ProcessEvents events;
  Processes ps(k, 3, host, events);
  EXPECT_EQ(ps.next_up(), nullptr);
  ps.start(0);
  ps.start(2);
  EXPECT_EQ(ps.next_up()->index(), 0u);
  EXPECT_EQ(ps.next_up()->index(), 2u);
  EXPECT_EQ(ps.next_up()->index(), 0u);
  ps.crash(0);
  EXPECT_EQ(ps.next_up()->index(), 2u);
  EXPECT_EQ(ps.next_up()->index(), 2u);
}

// ---- arrivals ---------------------------------------------------------------------------------

TEST(Arrivals, BurstsAndConstantRatesCallExactlyAsOften) {
  Kernel k;
  Rng rng(1);
  std::vector<std::uint32_t> calls(2);
  ArrivalSpec burst;
  burst.burst = 17;
  burst.from = Time{} + seconds(3);
  ArrivalSpec rate;
  rate.rate_per_s = 10;
  rate.from = Time{};
  rate.to = Time{} + seconds(60);
  rate.arrival = Arrival::constant;
  Arrivals a({burst, rate}, rng, [&](std::uint32_t segment) { ++calls[segment]; });
  a.install(k);
  k.run_until(Time{} + seconds(120));
  EXPECT_EQ(calls[0], 17u);
  EXPECT_EQ(calls[1], 600u);
  EXPECT_DOUBLE_EQ(rate.expected_calls(), 600.0);
}

// Bursty arrivals (a two-state MMPP) average their rate, and are as variable as the MMPP's
// formula says: the variance of the counts in long windows over their mean approaches scv()
// (for Poisson, 1). What Kingman's formula reads of them is the formula, so it must hold.
double index_of_dispersion(const ArrivalSpec& spec, std::uint64_t& total) {
  Kernel k;
  Rng rng(7);
  constexpr int kWindow = 200;
  std::vector<double> counts(static_cast<std::size_t>(to_seconds(spec.to - spec.from)) / kWindow, 0.0);
  struct Tally {
    Kernel& k;
    std::vector<double>& counts;
  } tally{k, counts};
  Arrivals a({spec}, rng, [t = &tally](std::uint32_t) {
    const auto w = static_cast<std::size_t>(to_seconds(t->k.now() - Time{})) / kWindow;
    if (w < t->counts.size()) ++t->counts[w];
  });
  a.install(k);
  k.run_until(spec.to);
  double mean = 0, var = 0;
  for (double c : counts) mean += c;
  total = static_cast<std::uint64_t>(mean);
  mean /= static_cast<double>(counts.size());
  for (double c : counts) var += (c - mean) * (c - mean);
  var /= static_cast<double>(counts.size() - 1);
  return var / mean;
}

TEST(Arrivals, BurstyAveragesItsRateAndIsAsVariableAsTheMmppSays) {
  ArrivalSpec bursty;
  bursty.rate_per_s = 100;
  bursty.to = Time{} + seconds(40'000);
  bursty.arrival = Arrival::bursty;
  bursty.peak = 4;
  bursty.high_share = 0.2;
  bursty.spell = seconds(10);
  EXPECT_DOUBLE_EQ(bursty.high_rate_per_s(), 400);
  EXPECT_DOUBLE_EQ(bursty.low_rate_per_s(), 25);
  EXPECT_EQ(bursty.low_spell(), seconds(40));
  EXPECT_NEAR(bursty.scv(), 3601, 1);
  std::uint64_t total = 0;
  // In windows of 200 s the index is within 4 % of its limit (the spells change at 0.125/s).
  const double idc = index_of_dispersion(bursty, total);
  EXPECT_NEAR(static_cast<double>(total), 100 * 40'000.0, 0.1 * 100 * 40'000.0);
  EXPECT_NEAR(idc, bursty.scv(), 0.35 * bursty.scv());
  ArrivalSpec poisson = bursty;
  poisson.arrival = Arrival::poisson;
  EXPECT_DOUBLE_EQ(poisson.scv(), 1.0);
  EXPECT_NEAR(index_of_dispersion(poisson, total), 1.0, 0.35);
}

// Shaped rates: the calls made in each part of a ramp or a day follow Lambda, the integral of the
// shape. Evenly spaced calls land exactly where Lambda crosses each whole number; Poisson ones
// within a few standard deviations of it (a fixed seed: the same counts every run).
std::vector<double> counts_per_window(const ArrivalSpec& spec, Duration window, std::uint64_t seed) {
  Kernel k;
  Rng rng(seed);
  std::vector<double> counts(static_cast<std::size_t>((spec.to - spec.from) / window), 0.0);
  struct Tally {
    Kernel& k;
    std::vector<double>& counts;
    Time from;
    Duration window;
  } tally{k, counts, spec.from, window};
  Arrivals a({spec}, rng, [t = &tally](std::uint32_t) {
    const auto w = static_cast<std::size_t>((t->k.now() - t->from) / t->window);
    EXPECT_LT(w, t->counts.size()) << "a call outside [from, to)";
    if (w < t->counts.size()) ++t->counts[w];
  });
  a.install(k);
  k.run_until(spec.to + hours(1));
  return counts;
}

TEST(Arrivals, ARampMakesItsCallsWhereItsIntegralSays) {
  ArrivalSpec ramp;
  ramp.rate_per_s = 0;
  ramp.ramp_to_per_s = 100;
  ramp.from = Time{} + minutes(10);
  ramp.to = ramp.from + seconds(1000);
  ramp.arrival = Arrival::constant;
  // Lambda(u) = 0.05 u^2: 50,000 in all, 12,500 in the first half.
  EXPECT_DOUBLE_EQ(ramp.expected_calls(), 50'000.0);
  EXPECT_DOUBLE_EQ(ramp.calls_before(ramp.from + seconds(500)), 12'500.0);
  EXPECT_DOUBLE_EQ(ramp.rate_at(ramp.from + seconds(250)), 25.0);
  EXPECT_EQ(ramp.rate_at(ramp.to), 0.0);
  EXPECT_DOUBLE_EQ(ramp.max_rate_per_s(), 100.0);
  std::vector<double> c = counts_per_window(ramp, seconds(100), 1);
  for (std::size_t w = 0; w < c.size(); ++w) {
    const double expected = ramp.calls_before(ramp.from + seconds(100) * static_cast<int>(w + 1)) -
                            ramp.calls_before(ramp.from + seconds(100) * static_cast<int>(w));
    EXPECT_NEAR(c[w], expected, 1.0) << "window " << w;
  }
  ramp.arrival = Arrival::poisson;
  c = counts_per_window(ramp, seconds(500), 2);
  EXPECT_NEAR(c[0], 12'500, 4 * std::sqrt(12'500.0));
  EXPECT_NEAR(c[1], 37'500, 4 * std::sqrt(37'500.0));
}

TEST(Arrivals, ADiurnalRateSwingsAroundItsMeanAndPeaksWhereItSays) {
  ArrivalSpec day;
  day.rate_per_s = 10;
  day.swing = 0.8;
  day.period = hours(24);
  day.peak_at = hours(14);
  day.to = Time{} + hours(48);
  EXPECT_NEAR(day.expected_calls(), 10 * 48 * 3600.0, 1e-6);  // two whole periods: the mean is the rate
  EXPECT_NEAR(day.rate_at(Time{} + hours(14)), 18, 1e-9);
  EXPECT_NEAR(day.rate_at(Time{} + hours(26)), 2, 1e-9);
  EXPECT_DOUBLE_EQ(day.max_rate_per_s(), 18);
  const std::vector<Time> peaks = day.busiest_moments();
  EXPECT_NE(std::find(peaks.begin(), peaks.end(), Time{} + hours(14)), peaks.end());
  EXPECT_NE(std::find(peaks.begin(), peaks.end(), Time{} + hours(38)), peaks.end());
  // Hour by hour over two days, Poisson: each hour within 4 standard deviations of Lambda's.
  const std::vector<double> c = counts_per_window(day, hours(1), 3);
  ASSERT_EQ(c.size(), 48u);
  for (std::size_t h = 0; h < c.size(); ++h) {
    const Time at = Time{} + hours(static_cast<int>(h));
    const double expected = day.calls_before(at + hours(1)) - day.calls_before(at);
    EXPECT_NEAR(c[h], expected, 4 * std::sqrt(expected)) << "hour " << h;
  }
  EXPECT_GT(c[14], 4 * c[2]);  // 2 p.m. is busier than 2 a.m. (about 17.6/s against 2.4/s)
  // The peak a capacity check reads: the day's crest, 18/s.
  const WeightedArrivals one[] = {{&day, 1.0}};
  EXPECT_NEAR(peak_load(one).rate_per_s, 18, 1e-9);
  // A ramp under the same cycle: its crest is near the last peak.
  ArrivalSpec both = day;
  both.ramp_to_per_s = 20;
  EXPECT_NEAR(both.rate_at(Time{} + hours(38)), (10 + 10 * 38.0 / 48) * 1.8, 1e-9);
  const WeightedArrivals two[] = {{&both, 1.0}};
  EXPECT_GE(peak_load(two).rate_per_s, both.rate_at(Time{} + hours(38)));
  EXPECT_LE(peak_load(two).rate_per_s, both.max_rate_per_s());
}

TEST(Arrivals, AShapedRateEndsAtItsEndAndHasNoCallsWithoutRate) {
  ArrivalSpec none;
  none.rate_per_s = 0;
  none.swing = 0.5;
  none.to = Time{} + hours(1);
  EXPECT_EQ(none.expected_calls(), 0.0);
  EXPECT_EQ(none.when_calls_reach(0.5, Time{}), kTimeNever);
  EXPECT_EQ(counts_per_window(none, hours(1), 4)[0], 0.0);
  // A full swing touches 0 at the trough: no call is made near it, none is lost elsewhere.
  ArrivalSpec full;
  full.rate_per_s = 50;
  full.swing = 1;
  full.period = seconds(100);
  full.peak_at = seconds(0);
  full.to = Time{} + seconds(1000);
  full.arrival = Arrival::constant;
  const std::vector<double> c = counts_per_window(full, seconds(1000), 5);
  EXPECT_NEAR(c[0], 50'000, 1);
}

// ---- metrics and expectations -----------------------------------------------------------------

TEST(Metrics, NamesAndFamiliesAreFoundAndFormattedInTheirUnits) {
  static constexpr MetricInfo kTable[] = {{"lost", Unit::count, ""}, {"latency_p{q}_s", Unit::seconds, ""}};
  EXPECT_EQ(find_metric(kTable, "lost")->index, 0u);
  const auto p = find_metric(kTable, "latency_p99.9_s");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->index, 1u);
  EXPECT_DOUBLE_EQ(p->parameter, 99.9);
  for (const char* bad : {"latency_p0_s", "latency_p100.5_s", "latency_p_s", "latency_pnan_s", "los"}) {
    EXPECT_FALSE(find_metric(kTable, bad)) << bad;
  }
  EXPECT_EQ(format_value(Unit::count, 2619310), "2619310");
  EXPECT_EQ(format_value(Unit::ratio, 1.0), "100%");
  EXPECT_EQ(format_value(Unit::ratio, 0.00125), "0.125%");
  EXPECT_EQ(format_value(Unit::seconds, 90.5), "1m30.500s");
}

struct TinyFigures {
  std::array<std::uint64_t, 2> violations{};
  double ok = 0;
};
constexpr InvariantInfo kTinyInvariants[] = {{"T-once", "at most once"}, {"T-lifecycle", "moves of the lifecycle"}};
constexpr MetricOf<TinyFigures> kTinyOwn[] = {{{"ok", Unit::count, "fine"}, [](const TinyFigures& f, double) { return f.ok; }}};
constexpr auto kTinyMetrics = with_violation_metrics<kTinyOwn, kTinyInvariants>();

TEST(Metrics, EveryInvariantGetsAViolationsMetricNamedFromItsId) {
  static_assert(kTinyMetrics.size() == 4);
  static_assert(metric_index<kTinyMetrics>("violations") == 1);
  static_assert(metric_index<kTinyMetrics>("once_violations") == 2);
  static_assert(metric_index<kTinyMetrics>("lifecycle_violations") == 3);
  EXPECT_EQ(kTinyMetrics[0].info.name, "ok");
  EXPECT_EQ(kTinyMetrics[2].info.meaning, "T-once violations");
  EXPECT_EQ(kTinyMetrics[3].info.meaning, "T-lifecycle violations");
  EXPECT_EQ(kTinyMetrics[3].info.unit, Unit::count);
  TinyFigures f;
  f.violations = {3, 7};
  f.ok = 1;
  EXPECT_EQ(kTinyMetrics[0].value(f, 0), 1.0);
  EXPECT_EQ(kTinyMetrics[1].value(f, 0), 10.0);
  EXPECT_EQ(kTinyMetrics[2].value(f, 0), 3.0);
  EXPECT_EQ(kTinyMetrics[3].value(f, 0), 7.0);
}

TEST(Expectations, AreWrittenInTheMetricsUnitAndRefusedWhenTheyCanNeverHold) {
  CompareOp op{};
  double v = 0;
  EXPECT_FALSE(parse_comparison("< 0.1%", Unit::ratio, op, v));
  EXPECT_EQ(op, CompareOp::lt);
  EXPECT_DOUBLE_EQ(v, 0.001);
  EXPECT_FALSE(parse_comparison("<= 2m", Unit::seconds, op, v));
  EXPECT_DOUBLE_EQ(v, 120);
  EXPECT_FALSE(parse_comparison("0", Unit::count, op, v));
  EXPECT_EQ(op, CompareOp::eq);
  EXPECT_TRUE(parse_comparison("> 99", Unit::ratio, op, v));
  EXPECT_TRUE(parse_comparison("> 100%", Unit::ratio, op, v));
  EXPECT_TRUE(parse_comparison("< 0", Unit::count, op, v));
  EXPECT_TRUE(parse_comparison("5%", Unit::count, op, v));
  EXPECT_TRUE(parse_comparison("< -1s", Unit::seconds, op, v));
  EXPECT_TRUE(parse_comparison("about 3", Unit::number, op, v));
}

// ---- schema -----------------------------------------------------------------------------------

struct Toy {
  std::string name = "toy";
  Duration every = seconds(5);
  std::uint32_t count = 1;
  std::vector<Window> quiet;
  bool operator==(const Toy&) const = default;
};

const Schema<Toy>& toy_schema() {
  static const Schema<Toy> schema = [] {
    Schema<Toy> s;
    s.key("name", &Toy::name, name_codec(), "what it is called", opt::required());
    s.key("every", &Toy::every, duration_codec(), "how often");
    s.key("count", &Toy::count, integer_codec<std::uint32_t>(1, 10), "how many");
    s.key("quiet", &Toy::quiet, list_codec(map_codec(window_schema())), "when it is quiet", opt::shown("never"));
    return s;
  }();
  return schema;
}

Toy read_toy(const std::string& text) {
  const Reader r("toy.yaml");
  Toy t;
  toy_schema().read(r, parse_yaml(text, "toy.yaml"), "toy", t);
  return t;
}

std::string write_toy(const Toy& t) {
  YAML::Emitter e;
  toy_schema().emit(e, t, Toy{});
  return e.c_str();
}

TEST(Schema, ReadsWritesAndDocumentsFromOneDeclaration) {
  const Toy t = read_toy("name: x\ncount: 3\nquiet: [{at: 1m, for: 2m}]\n");
  EXPECT_EQ(t.name, "x");
  EXPECT_EQ(t.count, 3u);
  EXPECT_EQ(t.every, seconds(5));
  ASSERT_EQ(t.quiet.size(), 1u);
  const std::string text = write_toy(t);
  EXPECT_EQ(text.find("every"), std::string::npos) << "a default is left out:\n" << text;
  EXPECT_EQ(read_toy(text), t);
  std::vector<DocTable> docs;
  toy_schema().document(docs, "toy", Toy{});
  ASSERT_EQ(docs.size(), 2u);  // the mapping, then its windows
  EXPECT_EQ(docs[0].rows[1].default_text, "`5s`");
  EXPECT_EQ(docs[0].rows[0].default_text, "(required)");
  EXPECT_EQ(docs[1].path, "toy.quiet[]");
}

TEST(Schema, RefusesWhatItDoesNotKnow) {
  auto problem = [](const std::string& text) {
    try {
      read_toy(text);
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(problem("name: x\ncuont: 2\n"),
            "toy.yaml:2:1: toy.cuont: unknown key; did you mean 'count'? (expected one of: name, every, count, quiet)");
  EXPECT_EQ(problem("count: 2\n"), "toy.yaml:1:1: toy.name: is required but missing");
  EXPECT_EQ(problem("name: \"  \"\n"), "toy.yaml:1:7: toy.name: must not be empty");
  EXPECT_EQ(problem("name: x\ncount: 11\n"), "toy.yaml:2:8: toy.count: must be between 1 and 10, got 11");
  EXPECT_EQ(problem("name: x\nquiet: [{at: 1m, for: 0s}]\n"),
            "toy.yaml:2:23: toy.quiet[0].for: must be positive: a window of no time never happens");
  EXPECT_EQ(problem("name: x\n<<: {count: 2}\n").find("did you mean"), std::string::npos);
}

}  // namespace
}  // namespace relaysim::sim
