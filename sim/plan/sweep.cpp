#include "sim/plan/sweep.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <ostream>
#include <stdexcept>

#include "model/core/assert.h"
#include "sim/report/series.h"
#include "sim/scenario/yaml_reader.h"
#include "sim/report/stamp.h"

namespace relaysim::sim {

namespace {

bool whole(std::string_view s, long long& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// A number exactly as it will be read back (17 significant digits), or nothing for NaN.
std::string exact(double v) {
  if (std::isnan(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string short_number(double v) {
  if (std::isnan(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

}  // namespace

Axis parse_axis(std::string_view text, const std::string& origin) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    throw ScenarioError(origin, 0, 0, "", "expected key.path=values (2..16, 2..16:2, or a,b,c), got '" + std::string(text) + "'");
  }
  Axis a{std::string(text.substr(0, eq)), {}};
  parse_override(a.path + "=x");  // the path's own checks
  const std::string_view spec = text.substr(eq + 1);
  const std::size_t dots = spec.find("..");
  if (dots != std::string_view::npos) {
    const std::size_t colon = spec.find(':', dots);
    long long from = 0, to = 0, step = 1;
    const bool ok = whole(spec.substr(0, dots), from) &&
                    whole(spec.substr(dots + 2, colon == std::string_view::npos ? std::string_view::npos : colon - dots - 2), to) &&
                    (colon == std::string_view::npos || whole(spec.substr(colon + 1), step));
    if (!ok || step <= 0 || to < from) {
      throw ScenarioError(origin, 0, 0, a.path,
                          "a range is FROM..TO or FROM..TO:STEP in whole numbers with FROM <= TO and STEP > 0, got '" +
                              std::string(spec) + "'");
    }
    if (static_cast<unsigned long long>((to - from) / step) >= kMaxPoints) {
      throw ScenarioError(origin, 0, 0, a.path, "the range '" + std::string(spec) + "' has more than a million values");
    }
    for (long long v = from; v <= to; v += step) a.values.push_back(std::to_string(v));
    return a;
  }
  // A list: split at commas outside brackets, so "[1, 2],[3]" is two values.
  int depth = 0;
  std::string cur;
  for (char c : spec) {
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      a.values.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  a.values.push_back(cur);
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    const std::string& v = a.values[i];
    if (v.empty()) throw ScenarioError(origin, 0, 0, a.path, "an empty value in the list '" + std::string(spec) + "'");
    // Two rows of the table would be one point, each labelled as if it were another.
    if (std::find(a.values.begin(), a.values.begin() + static_cast<std::ptrdiff_t>(i), v) != a.values.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw ScenarioError(origin, 0, 0, a.path, "the value '" + v + "' is given twice in '" + std::string(spec) + "'");
    }
  }
  // "2-4" reads as one value that no whole-number key takes: say what a range is.
  long long from = 0, to = 0;
  const std::size_t dash = spec.find('-', 1);
  if (a.values.size() == 1 && dash != std::string_view::npos && whole(spec.substr(0, dash), from) && whole(spec.substr(dash + 1), to)) {
    throw ScenarioError(origin, 0, 0, a.path,
                        "'" + std::string(spec) + "' is not a range; did you mean " + std::string(spec.substr(0, dash)) + ".." +
                            std::string(spec.substr(dash + 1)) + "?");
  }
  return a;
}

std::size_t SweepPlan::points() const {
  std::size_t n = 1;
  for (const Axis& a : axes) n *= a.values.size();
  return n;
}

std::vector<Override> SweepPlan::overrides(std::size_t point) const {
  RELAYSIM_ASSERT(point < points(), "a point of the grid");
  std::vector<Override> out(axes.size());
  for (std::size_t i = axes.size(); i-- > 0;) {
    const Axis& a = axes[i];
    out[i] = {a.path, a.values[point % a.values.size()], "--vary"};
    point /= a.values.size();
  }
  return out;
}

nlohmann::json SweepPlan::to_json() const {
  nlohmann::json j;
  stamp(j, kSweepSchema);
  j["file"] = file;
  j["system"] = system;
  j["scenario_hash"] = scenario_hash;
  j["replications"] = replications;
  j["seed"] = seed;
  j["metrics"] = metrics;
  j["expected"] = expected;
  j["shown"] = shown;
  j["shard"] = shard;
  j["shards"] = shards;
  j["axes"] = nlohmann::json::array();
  for (const Axis& a : axes) j["axes"].push_back({{"path", a.path}, {"values", a.values}});
  return j;
}

SweepPlan SweepPlan::from_json(const nlohmann::json& j) {
  try {
    SweepPlan p;
    p.file = j.at("file").get<std::string>();
    p.system = j.at("system").get<std::string>();
    p.scenario_hash = j.at("scenario_hash").get<std::uint64_t>();
    p.replications = j.at("replications").get<std::uint32_t>();
    p.seed = j.at("seed").get<std::uint64_t>();
    p.metrics = j.at("metrics").get<std::vector<std::string>>();
    p.expected = j.value("expected", std::vector<std::string>{});
    p.shown = j.value("shown", std::vector<std::string>{});
    p.shard = j.at("shard").get<std::uint32_t>();
    p.shards = j.at("shards").get<std::uint32_t>();
    for (const auto& a : j.at("axes")) p.axes.push_back({a.at("path").get<std::string>(), a.at("values").get<std::vector<std::string>>()});
    if (p.replications == 0 || p.shards == 0 || p.shard == 0 || p.shard > p.shards || p.points() > kMaxPoints ||
        p.shards > kMaxRuns || p.runs() > kMaxRuns) {
      throw std::runtime_error("its numbers do not add up");
    }
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("not a sweep's description: ") + e.what());
  }
}

bool SweepPlan::same_sweep(const SweepPlan& a, const SweepPlan& b) {
  return a.system == b.system && a.scenario_hash == b.scenario_hash && a.axes == b.axes &&
         a.replications == b.replications && a.seed == b.seed && a.metrics == b.metrics && a.shards == b.shards;
}

void write_runs_header(std::ostream& out, const SweepPlan& plan) {
  out << "run,point,replication,seed";
  for (const Axis& a : plan.axes) out << ',' << csv_field(a.path);
  out << ",pass,ending";
  for (const std::string& m : plan.metrics) out << ',' << m;
  out << '\n';
}

void write_run(std::ostream& out, const SweepPlan& plan, const SweepRun& r) {
  RELAYSIM_ASSERT(r.values.size() == plan.metrics.size(), "a value for every metric");
  RELAYSIM_ASSERT(r.run < plan.runs(), "a run of the sweep");
  const std::size_t point = plan.point_of(r.run);
  out << r.run << ',' << point << ',' << plan.replication_of(r.run) << ',' << plan.seed_of(r.run);
  for (const Override& o : plan.overrides(point)) out << ',' << csv_field(o.value);
  out << ',' << (r.pass ? "true" : "false") << ',' << r.ending;
  for (double v : r.values) out << ',' << exact(v);
  out << '\n';
}

std::vector<SweepRun> read_runs(std::istream& in, const SweepPlan& plan, const std::string& name) {
  std::string line;
  std::ostringstream header;
  write_runs_header(header, plan);
  if (!std::getline(in, line) || line + "\n" != header.str()) {
    throw std::runtime_error(name + ":1: the header is not the one this sweep writes");
  }
  const std::size_t fields = 6 + plan.axes.size() + plan.metrics.size();
  std::vector<SweepRun> out;
  for (std::size_t n = 2; std::getline(in, line); ++n) {
    const auto bad = [&](const std::string& why) { return std::runtime_error(name + ":" + std::to_string(n) + ": " + why); };
    const std::vector<std::string> f = csv_fields(line);
    if (f.size() != fields) throw bad("expected " + std::to_string(fields) + " fields, found " + std::to_string(f.size()));
    long long run = 0;
    if (!whole(f[0], run) || run < 0 || static_cast<std::size_t>(run) >= plan.runs()) throw bad("no run of this sweep is numbered '" + f[0] + "'");
    SweepRun r;
    r.run = static_cast<std::size_t>(run);
    if (f[4 + plan.axes.size()] != "true" && f[4 + plan.axes.size()] != "false") throw bad("pass is true or false");
    r.pass = f[4 + plan.axes.size()] == "true";
    r.ending = f[5 + plan.axes.size()];
    for (std::size_t m = 0; m < plan.metrics.size(); ++m) {
      const std::string& text = f[6 + plan.axes.size() + m];
      if (text.empty()) {
        r.values.push_back(std::nan(""));
        continue;
      }
      // What exact() writes: a finite number, or "inf" for a figure that never came (a drain that
      // never ended); nothing else strtod would take (nan, -inf, infinity, hex).
      if (text == "inf") {
        r.values.push_back(std::numeric_limits<double>::infinity());
        continue;
      }
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size() || !std::isfinite(v) || text.find_first_of("xXpP") != std::string::npos) {
        throw bad(plan.metrics[m] + " is not a number this sweep writes: '" + text + "'");
      }
      r.values.push_back(v);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<SweepPlan::Tail> SweepPlan::tails() const {
  std::vector<Tail> out;
  constexpr std::string_view head = "latency_p", tail = "_s";
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    const std::string_view name = metrics[m];
    if (name.size() <= head.size() + tail.size() || !name.starts_with(head) || !name.ends_with(tail)) continue;
    const std::string_view number = name.substr(head.size(), name.size() - head.size() - tail.size());
    double percent = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), percent);
    if (ec == std::errc{} && end == number.data() + number.size() && percent > 0 && percent <= 100) out.push_back({m, percent / 100});
  }
  return out;
}

void write_pooled(std::ostream& out, const PooledLatency& pooled) {
  out << "point,latency\n";
  for (std::size_t p = 0; p < pooled.size(); ++p) {
    if (pooled[p].count() != 0) out << p << ',' << pooled[p].encode() << '\n';
  }
}

void read_pooled(std::istream& in, const SweepPlan& plan, const std::string& name, PooledLatency& pooled) {
  RELAYSIM_ASSERT(pooled.size() == plan.points(), "a pool for every point");
  std::string line;
  if (!std::getline(in, line) || line != "point,latency") throw std::runtime_error(name + ":1: the header is not point,latency");
  for (std::size_t n = 2; std::getline(in, line); ++n) {
    const auto bad = [&](const std::string& why) { return std::runtime_error(name + ":" + std::to_string(n) + ": " + why); };
    const std::size_t comma = line.find(',');
    long long point = 0;
    if (comma == std::string::npos || !whole(std::string_view(line).substr(0, comma), point) || point < 0 ||
        static_cast<std::size_t>(point) >= plan.points()) {
      throw bad("expected a point of this sweep, a comma and its latency");
    }
    const auto h = LatencyHistogram::decode(std::string_view(line).substr(comma + 1));
    if (!h) throw bad("the latency is not a histogram as this relaysim writes one (was the shard written by another version?)");
    pooled[static_cast<std::size_t>(point)].merge(*h);
  }
}

std::vector<SweepPoint> summarize(const SweepPlan& plan, std::vector<SweepRun> runs, const PooledLatency& pooled) {
  std::sort(runs.begin(), runs.end(), [](const SweepRun& a, const SweepRun& b) { return a.run < b.run; });
  RELAYSIM_ASSERT(runs.size() == plan.runs(), "a table of the whole sweep needs every run");
  RELAYSIM_ASSERT(pooled.empty() || pooled.size() == plan.points(), "a pool for every point, or none");
  const std::vector<SweepPlan::Tail> tails = plan.tails();
  std::vector<SweepPoint> out;
  std::vector<double> column(plan.replications);
  for (std::size_t p = 0; p < plan.points(); ++p) {
    SweepPoint point;
    point.point = p;
    for (const Override& o : plan.overrides(p)) point.values.push_back(o.value);
    const SweepRun* first = &runs[p * plan.replications];
    for (std::uint32_t r = 0; r < plan.replications; ++r) {
      RELAYSIM_ASSERT(first[r].run == p * plan.replications + r, "each run once");
      ++point.runs;
      point.passed += first[r].pass ? 1 : 0;
    }
    for (std::size_t m = 0; m < plan.metrics.size(); ++m) {
      for (std::uint32_t r = 0; r < plan.replications; ++r) column[r] = first[r].values[m];
      point.metrics.push_back(estimate(column));
    }
    if (!pooled.empty()) {
      for (const SweepPlan::Tail& t : tails) {
        for (std::uint32_t r = 0; r < plan.replications; ++r) column[r] = first[r].values[t.metric];
        point.tails.push_back(tail_estimate(pooled.at(p), column, t.q));
      }
    }
    out.push_back(std::move(point));
  }
  return out;
}

void write_summary_csv(std::ostream& out, const SweepPlan& plan, const std::vector<SweepPoint>& points) {
  out << "point";
  for (const Axis& a : plan.axes) out << ',' << csv_field(a.path);
  out << ",metric,n,mean,stddev,ci95_low,ci95_high,min,max\n";
  for (const SweepPoint& p : points) {
    RELAYSIM_ASSERT(p.metrics.size() == plan.metrics.size() && p.values.size() == plan.axes.size(),
                    "a point has an estimate per metric and a value per axis");
    for (std::size_t m = 0; m < plan.metrics.size(); ++m) {
      const Estimate& e = p.metrics[m];
      out << p.point;
      for (const std::string& v : p.values) out << ',' << csv_field(v);
      out << ',' << plan.metrics[m] << ',' << e.n << ',' << short_number(e.mean) << ',' << short_number(e.stddev) << ','
          << short_number(e.ci_low) << ',' << short_number(e.ci_high) << ',' << short_number(e.min) << ','
          << short_number(e.max) << '\n';
    }
  }
}

void write_tails_csv(std::ostream& out, const SweepPlan& plan, const std::vector<SweepPoint>& points) {
  out << "point";
  for (const Axis& a : plan.axes) out << ',' << csv_field(a.path);
  out << ",metric,samples,beyond,runs,pooled,ci95_low,ci95_high,method\n";
  const std::vector<SweepPlan::Tail> tails = plan.tails();
  for (const SweepPoint& p : points) {
    RELAYSIM_ASSERT(p.tails.size() <= tails.size(), "a point's tails are the plan's");
    for (std::size_t i = 0; i < p.tails.size(); ++i) {
      const TailEstimate& t = p.tails[i];
      out << p.point;
      for (const std::string& v : p.values) out << ',' << csv_field(v);
      out << ',' << plan.metrics[tails[i].metric] << ',' << t.samples << ',' << t.beyond << ',' << t.runs << ',' << short_number(t.value)
          << ',' << short_number(t.ci_low) << ',' << short_number(t.ci_high) << ',' << t.method() << '\n';
    }
  }
}

nlohmann::json summary_json(const SweepPlan& plan, const std::vector<SweepPoint>& points) {
  const auto number = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  nlohmann::json j;
  stamp(j, kSweepSummarySchema);
  j["sweep"] = plan.to_json();
  for (const char* key : {"shard", "shards", "relaysim_version", "schema"}) j["sweep"].erase(key);
  j["confidence"] = 0.95;
  j["points"] = nlohmann::json::array();
  for (const SweepPoint& p : points) {
    nlohmann::json jp;
    RELAYSIM_ASSERT(p.values.size() == plan.axes.size() && p.metrics.size() == plan.metrics.size(),
                    "a point has a value per axis and an estimate per metric");
    for (std::size_t a = 0; a < plan.axes.size(); ++a) jp["at"][plan.axes[a].path] = p.values[a];
    jp["runs"] = p.runs;
    jp["passed"] = p.passed;
    for (std::size_t m = 0; m < plan.metrics.size(); ++m) {
      const Estimate& e = p.metrics[m];
      jp["metrics"][plan.metrics[m]] = {{"n", e.n}, {"mean", number(e.mean)}, {"stddev", number(e.stddev)},
                                         {"ci95", {number(e.ci_low), number(e.ci_high)}}, {"min", number(e.min)},
                                         {"max", number(e.max)}};
    }
    const std::vector<SweepPlan::Tail> tails = plan.tails();
    for (std::size_t i = 0; i < p.tails.size(); ++i) {
      const TailEstimate& t = p.tails[i];
      jp["tails"][plan.metrics[tails[i].metric]] = {{"samples", t.samples}, {"beyond", t.beyond}, {"runs", t.runs},
                                                    {"pooled", number(t.value)}, {"ci95", {number(t.ci_low), number(t.ci_high)}},
                                                    {"method", t.method()}};
    }
    j["points"].push_back(std::move(jp));
  }
  return j;
}

}  // namespace relaysim::sim
