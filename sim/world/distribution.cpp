#include "sim/world/distribution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/scenario/units.h"

namespace relaysim::sim {

namespace {
std::string format_factor(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", f);
  return buf;
}
}  // namespace

const Schema<LatencySpec>& latency_schema() {
  static const Schema<LatencySpec> schema = [] {
    Schema<LatencySpec> s(Style::flow, "Log-normal through a median and a 99th percentile, capped at 1000 times the median.");
    s.key("p50", &LatencySpec::p50, duration_codec(), "the median", opt::required());
    s.key("p99", &LatencySpec::p99, duration_codec(), "the 99th percentile", opt::always("`p50` (constant)"));
    s.check([](const Reader& r, const Map& m, LatencySpec& l) {
      if (l.p50 <= Duration::zero()) r.fail(m["p50"], m.child("p50"), "must be positive");
      if (!m.has("p99")) l.p99 = l.p50;
      if (l.p99 < l.p50) r.fail(m["p99"], m.child("p99"), "must not be below p50");
      if (l.p99 > l.p50 * 1000) {
        r.fail(m["p99"], m.child("p99"), "must be at most 1000 times p50: latencies are capped there, so a longer tail would not be simulated");
      }
    });
    return s;
  }();
  return schema;
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

Latency::Latency(const LatencySpec& spec) {
  const double p50 = std::max(1.0, static_cast<double>(spec.p50.count()));
  const double p99 = std::max(p50, static_cast<double>(spec.p99.count()));
  mu_ = std::log(p50);
  sigma_ = std::log(p99 / p50) / 2.3263478740408408;  // z for the 99th percentile
  // Cap at 1000x the median: a log-normal tail is unbounded, a network is not.
  cap_ = std::min(std::exp(mu_) * 1000.0, static_cast<double>(kMaxDuration.count()));
}

Duration Latency::sample(Rng& rng) const {
  if (sigma_ == 0.0) return Duration{static_cast<std::int64_t>(std::exp(mu_))};
  const double ns = std::min(std::exp(mu_ + sigma_ * rng.normal()), cap_);
  return Duration{std::max<std::int64_t>(1, static_cast<std::int64_t>(ns))};
}

void add_to_timeline(const std::vector<Outage>& outages, std::string_view subject, std::vector<TimelineEvent>& out) {
  for (const Outage& o : outages) {
    out.push_back({o.window.at, o.window.length, "outage", std::string(subject),
                   o.mode == OutageMode::error ? "every call fails at once" : "no call is answered"});
  }
}

void add_to_timeline(const std::vector<Slowdown>& slowdowns, std::string_view subject, std::vector<TimelineEvent>& out) {
  for (const Slowdown& s : slowdowns) {
    out.push_back({s.window.at, s.window.length, "slowdown", std::string(subject), "latency x" + format_factor(s.factor)});
  }
}

}  // namespace relaysim::sim
