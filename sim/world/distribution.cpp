#include "sim/world/distribution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <utility>

#include "model/core/assert.h"
#include "sim/scenario/units.h"

namespace relaysim::sim {

namespace {

// The most samples an empirical latency file may hold, and its largest size.
constexpr std::size_t kMaxSamples = 1'000'000;
constexpr std::uintmax_t kMaxSampleFileBytes = 32u << 20;

struct GammaKeys {
  Duration mean{};
  double shape = 1.0;
  bool operator==(const GammaKeys&) const = default;
};
struct UniformKeys {
  Duration min{};
  Duration max{};
  bool operator==(const UniformKeys&) const = default;
};

// Reads an empirical latency's samples: one per line, a number of seconds or a duration.
std::shared_ptr<const std::vector<std::int64_t>> read_samples(const Reader& r, const YAML::Node& n, const std::string& path,
                                                              const std::string& file) {
  namespace fs = std::filesystem;
  fs::path p(file);
  if (p.is_relative()) p = fs::path(r.file()).parent_path() / p;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) r.fail(n, path, "no file of samples at " + p.string());
  if (fs::file_size(p, ec) > kMaxSampleFileBytes) r.fail(n, path, p.string() + " is larger than 32 MiB");
  std::ifstream in(p);
  auto out = std::make_shared<std::vector<std::int64_t>>();
  std::string line;
  for (std::size_t no = 1; std::getline(in, line); ++no) {
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::size_t last = line.find_last_not_of(" \t\r");
    const std::string text = line.substr(first, last - first + 1);
    Duration d{};
    char* end = nullptr;
    const double seconds = std::strtod(text.c_str(), &end);
    if (end == text.c_str() + text.size() && std::isfinite(seconds) && seconds >= 0 && seconds <= to_seconds(kMaxDuration)) {
      d = Duration{static_cast<std::int64_t>(std::llround(seconds * 1e9))};
    } else if (!parse_duration(text, d) || d < Duration{}) {
      r.fail(n, path, p.string() + ":" + std::to_string(no) + ": expected a latency (0.25 or 250ms), got '" + text + "'");
    }
    if (out->size() == kMaxSamples) r.fail(n, path, p.string() + " holds more than a million samples");
    out->push_back(d.count());
  }
  if (out->empty()) r.fail(n, path, p.string() + " holds no samples");
  return out;
}

// The keys every latency may be written with; a mixture's parts add `weight`, the whole adds
// `mixture`.
namespace {

const Schema<GammaKeys>& gamma_schema() {
  static const Schema<GammaKeys> schema = [] {
    Schema<GammaKeys> g(Style::flow);
    g.key("mean", &GammaKeys::mean, duration_codec(), "the mean", opt::required());
    g.key("shape", &GammaKeys::shape, number_codec(1e-3, 1e6), "the shape (1: exponential)", opt::required());
    return g;
  }();
  return schema;
}

const Schema<GammaKeys>& erlang_schema() {
  static const Schema<GammaKeys> schema = [] {
    Schema<GammaKeys> g(Style::flow);
    g.key("mean", &GammaKeys::mean, duration_codec(), "the mean", opt::required());
    g.key("k", &GammaKeys::shape, number_codec(1, 1e6), "the number of exponential phases", opt::required());
    g.check([](const Reader& r, const Map& m, GammaKeys& v) {
      if (v.shape != std::floor(v.shape)) r.fail(m["k"], m.child("k"), "must be a whole number");
    });
    return g;
  }();
  return schema;
}

const Schema<UniformKeys>& uniform_schema() {
  static const Schema<UniformKeys> schema = [] {
    Schema<UniformKeys> u(Style::flow);
    u.key("min", &UniformKeys::min, duration_codec(), "the shortest", opt::required());
    u.key("max", &UniformKeys::max, duration_codec(), "the longest", opt::required());
    return u;
  }();
  return schema;
}

// `gamma: {mean, shape}` or `erlang: {mean, k}`, read into the latency (latency_codec writes it).
Schema<LatencySpec>::Key gamma_key(std::string name, const Schema<GammaKeys>& keys, bool is_erlang, std::string meaning) {
  typename Schema<LatencySpec>::Key k;
  k.name = std::move(name);
  k.kind = "mapping";
  k.meaning = std::move(meaning);
  k.read = [&keys, is_erlang](const Reader& r, const YAML::Node& n, const std::string& p, LatencySpec& l) {
    GammaKeys g;
    keys.read(r, n, p, g);
    l.shape = LatencyShape::gamma;
    l.mean = g.mean;
    l.gamma_shape = g.shape;
    l.erlang = is_erlang;
  };
  k.differs = [](const LatencySpec&, const LatencySpec&) { return false; };  // latency_codec writes it
  k.emit = [](YAML::Emitter&, const LatencySpec&, const LatencySpec&) {};
  return k;
}

// `uniform: {min, max}`, read into the latency (latency_codec writes it).
Schema<LatencySpec>::Key uniform_key() {
  typename Schema<LatencySpec>::Key u;
  u.name = "uniform";
  u.kind = "mapping";
  u.meaning = "uniform: `{min, max}`";
  u.read = [](const Reader& r, const YAML::Node& n, const std::string& p, LatencySpec& l) {
    UniformKeys v;
    uniform_schema().read(r, n, p, v);
    if (v.max < v.min) r.fail(n, p + ".max", "must not be below min");
    l.shape = LatencyShape::uniform;
    l.min = v.min;
    l.max = v.max;
  };
  u.differs = [](const LatencySpec&, const LatencySpec&) { return false; };
  u.emit = [](YAML::Emitter&, const LatencySpec&, const LatencySpec&) {};
  return u;
}

}  // namespace

// A log-normal's figure other than p50 and p99 (`p90`, `mean`), read into `member` for the fit in
// check_one_shape (latency_codec writes the fitted p50 and p99).
Schema<LatencySpec>::Key fit_key(std::string name, Duration LatencySpec::*member, std::string meaning) {
  typename Schema<LatencySpec>::Key k;
  k.name = std::move(name);
  k.kind = "duration";
  k.meaning = std::move(meaning);
  k.default_text = "—";
  k.read = [member](const Reader& r, const YAML::Node& n, const std::string& p, LatencySpec& l) { l.*member = r.duration(n, p); };
  k.differs = [](const LatencySpec&, const LatencySpec&) { return false; };
  k.emit = [](YAML::Emitter&, const LatencySpec&, const LatencySpec&) {};
  return k;
}

// The standard normal's 90th and 99th percentiles.
constexpr double kZ90 = 1.2815515655446004;
constexpr double kZ99 = 2.3263478740408408;

// The log-normal through the figures given (two of p50, p90, p99 and mean), as its p50 and p99.
// A percentile and the mean leave two log-normals when the percentile is above the mean; the one
// with the lighter tail is taken (its sigma below the percentile's z), which is also the one whose
// mean is the least a percentile allows: e^(-z^2/2) of it, 1/14.96 of a p99.
void fit_lognormal(const Reader& r, const Map& m, LatencySpec& l) {
  const bool p50 = m.has("p50"), p90 = m.has("p90"), p99 = m.has("p99"), mean = m.has("mean");
  const int given = p50 + p90 + p99 + mean;
  if (given > 2) r.fail(m.node(), m.path(), "a log-normal has two parameters: give two of p50, p90, p99 and mean");
  if (given == 1 && !p50) r.fail(m.node(), m.path(), "a log-normal needs two of p50, p90, p99 and mean (p50 alone: constant)");
  const std::pair<const char*, Duration> figures[] = {{"p50", l.p50}, {"p90", l.fit_p90}, {"p99", l.p99}, {"mean", l.fit_mean}};
  for (const auto& [k, v] : figures) {
    if (m.has(k) && v <= Duration::zero()) r.fail(m[k], m.child(k), "must be positive");
  }
  const auto s = [](Duration d) { return to_seconds(d); };
  const auto at = [](double seconds) { return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds)); };
  // Sigma from a percentile at `z` and the mean, refusing a mean the percentile cannot have.
  const auto sigma_from_mean = [&](const char* key, double pct, double z) {
    const double x = std::log(pct / s(l.fit_mean));  // = z sigma - sigma^2 / 2
    if (x > z * z / 2) {
      r.fail(m["mean"], m.child("mean"), "a log-normal whose " + std::string(key) + " is " + format_duration(at(pct)) +
                                             " has a mean of at least " + format_duration(at(pct * std::exp(-z * z / 2))));
    }
    return x >= 0 ? z - std::sqrt(z * z - 2 * x) : z + std::sqrt(z * z - 2 * x);
  };
  double mu = 0, sigma = 0;
  if (p50 && (p99 || given == 1)) return;  // as written: p50 and p99, or p50 alone (checked by the caller)
  if (p50 && p90) {
    if (l.fit_p90 < l.p50) r.fail(m["p90"], m.child("p90"), "must not be below p50");
    mu = std::log(s(l.p50));
    sigma = std::log(s(l.fit_p90) / s(l.p50)) / kZ90;
  } else if (p90 && p99) {
    if (l.p99 < l.fit_p90) r.fail(m["p99"], m.child("p99"), "must not be below p90");
    sigma = std::log(s(l.p99) / s(l.fit_p90)) / (kZ99 - kZ90);
    mu = std::log(s(l.fit_p90)) - kZ90 * sigma;
  } else if (p50 && mean) {
    if (l.fit_mean < l.p50) r.fail(m["mean"], m.child("mean"), "must not be below p50: a log-normal's mean is at least its median");
    mu = std::log(s(l.p50));
    sigma = std::sqrt(2 * std::log(s(l.fit_mean) / s(l.p50)));
  } else if (p90 && mean) {
    sigma = sigma_from_mean("p90", s(l.fit_p90), kZ90);
    mu = std::log(s(l.fit_p90)) - kZ90 * sigma;
  } else {
    RELAYSIM_ASSERT(p99 && mean, "the pairs above are every other pair");
    sigma = sigma_from_mean("p99", s(l.p99), kZ99);
    mu = std::log(s(l.p99)) - kZ99 * sigma;
  }
  const double median = std::exp(mu), tail = std::exp(mu + kZ99 * sigma);
  if (!(median >= 1e-9 && tail <= median * 1000 && tail <= to_seconds(kLongestDuration))) {
    const auto secs = [](double v) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3gs", v);
      return std::string(buf);
    };
    r.fail(m.node(), m.path(), "the log-normal through these figures has p50 " + secs(median) + " and p99 " + secs(tail) +
                                   ": its p99 must be at most 1000 times its p50 (latencies are capped there, so a longer tail would not be simulated)");
  }
  l.p50 = at(median);
  l.p99 = at(tail);
  l.fit_p90 = l.fit_mean = Duration{};
}

void latency_keys(Schema<LatencySpec>& s) {
  s.key("p50", &LatencySpec::p50, duration_codec(), "log-normal: the median");
  s.key("p99", &LatencySpec::p99, duration_codec(), "log-normal: the 99th percentile", opt::shown("`p50` (constant)"));
  s.add(fit_key("p90", &LatencySpec::fit_p90, "log-normal: the 90th percentile (with one of p50, p99 or mean)"));
  s.add(fit_key("mean", &LatencySpec::fit_mean, "log-normal: the mean (with one of p50, p90 or p99); the fit is refused where no log-normal has it"));
  s.key("constant", &LatencySpec::mean, duration_codec(), "always this long", opt::shown("—"));
  s.last().read = [](const Reader& r, const YAML::Node& n, const std::string& p, LatencySpec& l) {
    l.mean = r.duration(n, p);
    l.shape = LatencyShape::constant;
  };
  s.key("exponential", &LatencySpec::mean, duration_codec(), "exponential with this mean", opt::shown("—"));
  s.last().read = [](const Reader& r, const YAML::Node& n, const std::string& p, LatencySpec& l) {
    l.mean = r.duration(n, p);
    l.shape = LatencyShape::exponential;
  };
  s.add(gamma_key("gamma", gamma_schema(), false, "gamma: `{mean, shape}`"));
  s.add(gamma_key("erlang", erlang_schema(), true, "Erlang-k: `{mean, k}`"));
  s.add(uniform_key());
  s.key("empirical", &LatencySpec::file, name_codec(), "a file of samples, one per line (seconds, or a duration), relative to the scenario file", opt::shown("—"));
  s.last().read = [](const Reader& r, const YAML::Node& n, const std::string& p, LatencySpec& l) {
    l.file = r.scalar(n, p, "a file name");
    l.samples = read_samples(r, n, p, l.file);
    l.shape = LatencyShape::empirical;
  };
}

// Which keys a latency was written with: exactly one way of giving it.
void check_one_shape(const Reader& r, const Map& m, LatencySpec& l) {
  const bool lognormal = m.has("p50") || m.has("p90") || m.has("p99") || m.has("mean");
  int given = lognormal ? 1 : 0;
  for (const char* k : {"constant", "exponential", "gamma", "erlang", "uniform", "empirical", "mixture"}) given += m.has(k) ? 1 : 0;
  if (given != 1) {
    r.fail(m.node(), m.path(), given == 0 ? "a latency needs one of p50 (or two of p50, p90, p99 and mean), constant, exponential, gamma, erlang, uniform, empirical or mixture"
                                          : "a latency is one distribution: give only one of p50, constant, exponential, gamma, erlang, uniform, empirical or mixture");
  }
  if (lognormal) {
    l.shape = LatencyShape::lognormal;
    fit_lognormal(r, m, l);
  }
  if (lognormal && m.has("p50") && !m.has("p90") && !m.has("mean")) {  // as written: p50, with p99 or alone
    if (l.p50 <= Duration::zero()) r.fail(m["p50"], m.child("p50"), "must be positive");
    if (!m.has("p99")) l.p99 = l.p50;
    if (l.p99 < l.p50) r.fail(m["p99"], m.child("p99"), "must not be below p50");
    if (l.p99 > l.p50 * 1000) {
      r.fail(m["p99"], m.child("p99"), "must be at most 1000 times p50: latencies are capped there, so a longer tail would not be simulated");
    }
  }
  const bool needs_mean = l.shape == LatencyShape::exponential || l.shape == LatencyShape::gamma;
  if (needs_mean && l.mean <= Duration::zero()) {
    const std::string key = m.has("exponential") ? "exponential" : m.has("gamma") ? "gamma" : "erlang";
    r.fail(m[key], m.child(key), "the mean must be positive");
  }
}

const Schema<LatencySpec>& part_schema() {
  static const Schema<LatencySpec> schema = [] {
    Schema<LatencySpec> s(Style::flow, "One part of a mixture: a latency and its weight.");
    s.key("weight", &LatencySpec::weight, number_codec(1e-9, 1e9), "its share, relative to the other parts'");
    latency_keys(s);
    s.check(check_one_shape);
    return s;
  }();
  return schema;
}

void emit_latency(YAML::Emitter& e, const LatencySpec& l, bool part) {
  e << YAML::Flow << YAML::BeginMap;
  if (part) e << YAML::Key << "weight" << YAML::Value << write_number(l.weight);
  switch (l.shape) {
    case LatencyShape::lognormal:
      e << YAML::Key << "p50" << YAML::Value << write_duration(l.p50);
      if (l.p99 != l.p50) e << YAML::Key << "p99" << YAML::Value << write_duration(l.p99);
      break;
    case LatencyShape::constant: e << YAML::Key << "constant" << YAML::Value << write_duration(l.mean); break;
    case LatencyShape::exponential: e << YAML::Key << "exponential" << YAML::Value << write_duration(l.mean); break;
    case LatencyShape::gamma:
      e << YAML::Key << (l.erlang ? "erlang" : "gamma") << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "mean"
        << YAML::Value << write_duration(l.mean) << YAML::Key << (l.erlang ? "k" : "shape") << YAML::Value
        << write_number(l.gamma_shape) << YAML::EndMap;
      break;
    case LatencyShape::uniform:
      e << YAML::Key << "uniform" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "min" << YAML::Value
        << write_duration(l.min) << YAML::Key << "max" << YAML::Value << write_duration(l.max) << YAML::EndMap;
      break;
    case LatencyShape::empirical: e << YAML::Key << "empirical" << YAML::Value << l.file; break;
    case LatencyShape::mixture:
      e << YAML::Key << "mixture" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const LatencySpec& p : l.mixture) emit_latency(e, p, true);
      e << YAML::EndSeq;
      break;
  }
  e << YAML::EndMap;
}

const Schema<LatencySpec>& latency_schema() {
  static const Schema<LatencySpec> schema = [] {
    Schema<LatencySpec> s(Style::flow, "One distribution, named by its key: log-normal (`p50`, with `p99`; or two of `p50`, `p90`, `p99`, `mean`), `constant`, `exponential`, `gamma`, `erlang`, `uniform`, `empirical` (a file of samples) or a `mixture` of these.");
    latency_keys(s);
    typename Schema<LatencySpec>::Key k;
    k.name = "mixture";
    k.kind = "list of parts";
    k.meaning = "a mixture: each part a latency with a `weight`";
    k.read = [](const Reader& r, const YAML::Node& n, const std::string& p, LatencySpec& l) {
      l.mixture.clear();
      each(r, n, p, [&](const YAML::Node& item, const std::string& ip) {
        LatencySpec part;
        part_schema().read(r, item, ip, part);
        l.mixture.push_back(std::move(part));
      });
      if (l.mixture.empty()) r.fail(n, p, "a mixture needs at least one part");
      l.shape = LatencyShape::mixture;
    };
    k.differs = [](const LatencySpec&, const LatencySpec&) { return false; };
    k.emit = [](YAML::Emitter&, const LatencySpec&, const LatencySpec&) {};
    s.add(std::move(k));
    s.check(check_one_shape);
    return s;
  }();
  return schema;
}

}  // namespace

bool LatencySpec::operator==(const LatencySpec& o) const {
  const bool same_samples = samples == o.samples || (samples && o.samples && *samples == *o.samples);
  return shape == o.shape && p50 == o.p50 && p99 == o.p99 && mean == o.mean && gamma_shape == o.gamma_shape &&
         erlang == o.erlang && min == o.min && max == o.max && file == o.file && same_samples && mixture == o.mixture &&
         weight == o.weight;
}

Codec<LatencySpec> latency_codec() {
  return {"latency, below",
          [](const Reader& r, const YAML::Node& n, const std::string& p, LatencySpec& v) {
            LatencySpec fresh;  // a latency is given whole: nothing of the default's shape carries over
            latency_schema().read(r, n, p, fresh);
            v = std::move(fresh);
          },
          [](YAML::Emitter& e, const LatencySpec& v, const LatencySpec&) { emit_latency(e, v, false); },
          [](std::vector<DocTable>& out, const std::string& p, const LatencySpec& d) {
            latency_schema().document(out, p, d);
            part_schema().document(out, p + ".mixture[]", LatencySpec{});
          }};
}

LatencyMoments moments(const LatencySpec& l) {
  const double mean = to_seconds(l.mean);
  switch (l.shape) {
    case LatencyShape::lognormal: {
      const double sigma = std::log(to_seconds(l.p99) / to_seconds(l.p50)) / 2.3263478740408408;
      return {to_seconds(l.p50) * std::exp(sigma * sigma / 2), std::expm1(sigma * sigma)};
    }
    case LatencyShape::constant: return {mean, 0};
    case LatencyShape::exponential: return {mean, 1};
    case LatencyShape::gamma: return {mean, 1 / l.gamma_shape};
    case LatencyShape::uniform: {
      const double a = to_seconds(l.min), b = to_seconds(l.max);
      const double m = (a + b) / 2;
      return {m, m == 0 ? 0 : (b - a) * (b - a) / 12 / (m * m)};
    }
    case LatencyShape::empirical: {
      RELAYSIM_ASSERT(l.samples && !l.samples->empty(), "an empirical latency has samples");
      double sum = 0, squares = 0;
      for (std::int64_t ns : *l.samples) sum += static_cast<double>(ns) * 1e-9;
      const double m = sum / static_cast<double>(l.samples->size());
      for (std::int64_t ns : *l.samples) squares += (static_cast<double>(ns) * 1e-9 - m) * (static_cast<double>(ns) * 1e-9 - m);
      const double var = squares / static_cast<double>(l.samples->size());
      return {m, m == 0 ? 0 : var / (m * m)};
    }
    case LatencyShape::mixture: {
      double w = 0, m1 = 0, m2 = 0;
      for (const LatencySpec& p : l.mixture) {
        const LatencyMoments pm = moments(p);
        w += p.weight;
        m1 += p.weight * pm.mean_s;
        m2 += p.weight * pm.mean_s * pm.mean_s * (1 + pm.scv);
      }
      RELAYSIM_ASSERT(w > 0, "a mixture's parts weigh something");
      m1 /= w;
      m2 /= w;
      return {m1, m1 == 0 ? 0 : (m2 - m1 * m1) / (m1 * m1)};
    }
  }
  return {};
}


const Schema<Window>& window_schema() {
  static const Schema<Window> schema = [] {
    Schema<Window> s(Style::flow);
    s.key("at", &Window::at, time_codec(), "when it starts", opt::required());
    s.key("for", &Window::length, duration_codec(), "how long it lasts", opt::shown("forever"));
    s.check([](const Reader& r, const Map& m, Window& w) {
      if (w.length <= Duration::zero()) r.fail(m["for"], m.child("for"), "must be positive: a window of no time never happens");
    });
    return s;
  }();
  return schema;
}

const Schema<Outage>& outage_schema() {
  static const Schema<Outage> schema = [] {
    Schema<Outage> s(Style::flow);
    s.include(&Outage::window, window_schema());
    s.key("mode", &Outage::mode, choice_codec<OutageMode>({{"error", OutageMode::error}, {"timeout", OutageMode::timeout}}),
          "`error` answers errors fast; `timeout` never answers (each call times out)");
    return s;
  }();
  return schema;
}

const Schema<Slowdown>& slowdown_schema() {
  static const Schema<Slowdown> schema = [] {
    Schema<Slowdown> s(Style::flow);
    s.include(&Slowdown::window, window_schema());
    s.key("factor", &Slowdown::factor, number_codec(1, 1e6), "latency × this for the window");
    return s;
  }();
  return schema;
}

double slowdown_at(const std::vector<Slowdown>& slowdowns, Time t) {
  double f = 1.0;
  for (const Slowdown& s : slowdowns) {
    if (s.window.contains(t)) f = std::max(f, s.factor);
  }
  return f;
}

Latency::Latency(const LatencySpec& spec) : shape_(spec.shape), samples_(spec.samples) {
  switch (shape_) {
    case LatencyShape::lognormal: {
      const double p50 = std::max(1.0, static_cast<double>(spec.p50.count()));
      const double p99 = std::max(p50, static_cast<double>(spec.p99.count()));
      a_ = std::log(p50);
      b_ = std::log(p99 / p50) / 2.3263478740408408;  // z for the 99th percentile
      // Cap at 1000x the median: a log-normal tail is unbounded, a network is not.
      cap_ = std::min(std::exp(a_) * 1000.0, static_cast<double>(kMaxDuration.count()));
      break;
    }
    case LatencyShape::constant:
    case LatencyShape::exponential: a_ = static_cast<double>(spec.mean.count()); break;
    case LatencyShape::gamma:
      RELAYSIM_ASSERT(spec.gamma_shape > 0, "a gamma's shape is positive");
      a_ = static_cast<double>(spec.mean.count());
      b_ = spec.gamma_shape;
      break;
    case LatencyShape::uniform:
      RELAYSIM_ASSERT(spec.max >= spec.min, "a uniform latency's max is not below its min");
      a_ = static_cast<double>(spec.min.count());
      b_ = static_cast<double>(spec.max.count());
      break;
    case LatencyShape::empirical: RELAYSIM_ASSERT(samples_ && !samples_->empty(), "an empirical latency has samples"); break;
    case LatencyShape::mixture: {
      double total = 0;
      for (const LatencySpec& p : spec.mixture) total += p.weight;
      RELAYSIM_ASSERT(total > 0, "a mixture's parts weigh something");
      double sum = 0;
      for (const LatencySpec& p : spec.mixture) {
        parts_.emplace_back(p);
        sum += p.weight;
        cumulative_.push_back(sum / total);
      }
      RELAYSIM_ASSERT(!parts_.empty(), "a mixture has parts");
      cumulative_.back() = 1.0;
      break;
    }
  }
}

namespace {

// Gamma with shape k and scale 1 (Marsaglia and Tsang, 2000; for k < 1, boosted from k + 1).
double standard_gamma(double k, Rng& rng) {
  if (k < 1) return standard_gamma(k + 1, rng) * std::pow(1.0 - rng.uniform01(), 1 / k);
  const double d = k - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  while (true) {
    double x = 0, v = 0;
    do {
      x = rng.normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - rng.uniform01();  // (0, 1]
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

Duration from_ns(double ns) {
  return Duration{std::clamp<std::int64_t>(static_cast<std::int64_t>(ns), 1, kMaxDuration.count())};
}

}  // namespace

Duration Latency::sample(Rng& rng) const {
  switch (shape_) {
    case LatencyShape::lognormal: {
      if (b_ == 0.0) return Duration{static_cast<std::int64_t>(std::exp(a_))};
      const double ns = std::min(std::exp(a_ + b_ * rng.normal()), cap_);
      return Duration{std::max<std::int64_t>(1, static_cast<std::int64_t>(ns))};
    }
    case LatencyShape::constant: return Duration{static_cast<std::int64_t>(a_)};
    case LatencyShape::exponential: return from_ns(rng.exponential(a_));
    case LatencyShape::gamma: return from_ns(a_ / b_ * standard_gamma(b_, rng));
    case LatencyShape::uniform: return Duration{static_cast<std::int64_t>(a_ + (b_ - a_) * rng.uniform01())};
    case LatencyShape::empirical: return Duration{(*samples_)[rng.below(samples_->size())]};
    case LatencyShape::mixture: {
      const double u = rng.uniform01();
      std::size_t i = 0;
      while (i + 1 < cumulative_.size() && u >= cumulative_[i]) ++i;
      return parts_[i].sample(rng);
    }
  }
  return Duration{};
}

}  // namespace relaysim::sim
