#include "sim/scenario/writer.h"

#include <cstdio>
#include <sstream>

#include "sim/scenario/expect.h"

namespace relaysim::sim {

using webhook::PlatformConfig;
using webhook::Verdict;

std::string write_duration(Duration d) {
  const std::int64_t ns = d.count();
  if (ns == 0) return "0s";
  struct Unit {
    std::int64_t ns;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86'400'000'000'000, "d"}, {3'600'000'000'000, "h"}, {60'000'000'000, "m"},
                                    {1'000'000'000, "s"},      {1'000'000, "ms"},         {1'000, "us"}};
  for (const Unit& u : kUnits) {
    if (ns % u.ns == 0) return std::to_string(ns / u.ns) + u.name;
  }
  return std::to_string(ns) + "ns";
}

namespace {

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  if (v == static_cast<double>(static_cast<long long>(v)) && v > -1e15 && v < 1e15) {
    return std::to_string(static_cast<long long>(v));
  }
  // Prefer the shortest text that reads back as the same double.
  for (int digits = 1; digits <= 17; ++digits) {
    char shorter[40];
    std::snprintf(shorter, sizeof shorter, "%.*g", digits, v);
    if (std::stod(shorter) == v) return shorter;
  }
  return buf;
}
std::string quoted(const std::string& text) {
  std::string q = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}
std::string t(Time at) { return write_duration(at.time_since_epoch()); }
std::string latency(const LatencySpec& l) {
  return "{p50: " + write_duration(l.p50) + ", p99: " + write_duration(l.p99) + "}";
}
std::string window(const Window& w) {
  std::string s = "at: " + t(w.at);
  if (w.length < kForever) s += ", for: " + write_duration(w.length);
  return s;
}
const char* verdict(Verdict v) {
  switch (v) {
    case Verdict::delivered: return "delivered";
    case Verdict::retry: return "retry";
    case Verdict::terminal: return "terminal";
  }
  return "retry";
}
std::string backoff(const BackoffPolicy& b, const BackoffPolicy& d) {
  std::string s;
  auto add = [&](const std::string& kv) { s += (s.empty() ? "" : ", ") + kv; };
  if (b.kind != d.kind) add("backoff: " + std::string(to_string(b.kind)));
  if (b.initial != d.initial) add("initial: " + write_duration(b.initial));
  if (b.multiplier != d.multiplier) add("multiplier: " + number(b.multiplier));
  if (b.max_interval != d.max_interval) add("max_interval: " + write_duration(b.max_interval));
  if (b.jitter != d.jitter) add("jitter: " + std::string(to_string(b.jitter)));
  return s;
}

void platform(std::ostringstream& o, const PlatformConfig& p) {
  const PlatformConfig d;
  std::ostringstream b;
  if (p.pods != d.pods) b << "  pods: " << p.pods << "\n";
  if (p.concurrency_per_pod != d.concurrency_per_pod) b << "  concurrency_per_pod: " << p.concurrency_per_pod << "\n";
  if (p.lease != d.lease) b << "  lease: " << write_duration(p.lease) << "\n";
  if (p.allow_unsafe_lease != d.allow_unsafe_lease) b << "  allow_unsafe_lease: true\n";
  if (p.lookup_timeout != d.lookup_timeout) b << "  lookup_timeout: " << write_duration(p.lookup_timeout) << "\n";
  if (p.http_timeout != d.http_timeout) b << "  http_timeout: " << write_duration(p.http_timeout) << "\n";
  std::string retry = backoff(p.retry.backoff, d.retry.backoff);
  auto add = [&](std::string& s, const std::string& kv) { s += (s.empty() ? "" : ", ") + kv; };
  if (p.retry.deadline != d.retry.deadline) add(retry, "deadline: " + write_duration(p.retry.deadline));
  if (p.retry.retry_after_max != d.retry.retry_after_max) {
    add(retry, "retry_after_max: " + write_duration(p.retry.retry_after_max));
  }
  if (!retry.empty()) b << "  retry: {" << retry << "}\n";
  const std::string dep = backoff(p.dependency_backoff, d.dependency_backoff);
  if (!dep.empty()) b << "  dependency_backoff: {" << dep << "}\n";
  std::string cache;
  if (p.url_cache_ttl != d.url_cache_ttl) add(cache, "ttl: " + write_duration(p.url_cache_ttl));
  if (p.url_cache_max_entries != d.url_cache_max_entries) add(cache, "max_entries: " + std::to_string(p.url_cache_max_entries));
  if (!cache.empty()) b << "  url_cache: {" << cache << "}\n";
  std::string br;
  const BreakerConfig& x = p.serviceb_breaker;
  const BreakerConfig& y = d.serviceb_breaker;
  if (x.window != y.window) add(br, "window: " + write_duration(x.window));
  if (x.min_calls != y.min_calls) add(br, "min_calls: " + std::to_string(x.min_calls));
  if (x.failure_rate != y.failure_rate) add(br, "failure_rate: " + number(x.failure_rate));
  if (x.open_for != y.open_for) add(br, "open_for: " + write_duration(x.open_for));
  if (x.half_open_probes != y.half_open_probes) add(br, "half_open_probes: " + std::to_string(x.half_open_probes));
  if (!br.empty()) b << "  serviceb_breaker: {" << br << "}\n";
  std::string cls;
  const auto& c = p.classification;
  const auto& e = d.classification;
  for (std::size_t k = 1; k < c.by_class.size(); ++k) {
    if (c.by_class[k] != e.by_class[k]) add(cls, std::to_string(k) + "xx: " + verdict(c.by_class[k]));
  }
  for (const auto& [status, v] : c.by_status) {
    auto it = e.by_status.find(status);
    if (it == e.by_status.end() || it->second != v) add(cls, "\"" + std::to_string(status) + "\": " + verdict(v));
  }
  if (c.timeout != e.timeout) add(cls, std::string("timeout: ") + verdict(c.timeout));
  if (c.connect_error != e.connect_error) add(cls, std::string("connect_error: ") + verdict(c.connect_error));
  if (c.dns_error != e.dns_error) add(cls, std::string("dns_error: ") + verdict(c.dns_error));
  if (!cls.empty()) b << "  classification: {" << cls << "}\n";
  if (p.max_payload_bytes != d.max_payload_bytes) b << "  max_payload_bytes: " << p.max_payload_bytes << "\n";
  if (p.retention) b << "  retention: " << write_duration(*p.retention) << "\n";
  if (!b.str().empty()) o << "platform:\n" << b.str();
}

void world(std::ostringstream& o, const Scenario& s) {
  o << "world:\n";
  if (s.cxids != 0) o << "  cxids: " << s.cxids << "\n";
  const ServiceBSpec d;
  const ServiceBSpec& b = s.serviceb;
  std::ostringstream sb;
  if (b.latency.p50 != d.latency.p50 || b.latency.p99 != d.latency.p99) sb << "    latency: " << latency(b.latency) << "\n";
  if (b.error_rate != d.error_rate) sb << "    error_rate: " << number(b.error_rate) << "\n";
  if (b.unknown_cxids != d.unknown_cxids) sb << "    unknown_cxids: " << number(b.unknown_cxids) << "\n";
  if (!b.outages.empty()) {
    sb << "    outages:\n";
    for (const auto& x : b.outages) {
      sb << "      - {" << window(x.window) << (x.mode == OutageMode::timeout ? ", mode: timeout" : "") << "}\n";
    }
  }
  if (!b.url_changes.empty()) {
    sb << "    url_changes:\n";
    for (const auto& x : b.url_changes) sb << "      - {at: " << t(x.at) << ", fraction: " << number(x.fraction) << "}\n";
  }
  if (!sb.str().empty()) o << "  serviceb:\n" << sb.str();
  o << "  endpoints:\n";
  const EndpointGroup eg;
  for (const EndpointGroup& g : s.endpoints) {
    o << "    - name: " << quoted(g.name) << "\n";
    if (g.count != eg.count) o << "      count: " << g.count << "\n";
    if (g.latency.p50 != eg.latency.p50 || g.latency.p99 != eg.latency.p99) o << "      latency: " << latency(g.latency) << "\n";
    if (g.error_rate != eg.error_rate || g.error_status != eg.error_status) {
      o << "      errors: {rate: " << number(g.error_rate) << ", status: " << g.error_status << "}\n";
    }
    if (g.retry_after >= Duration::zero()) o << "      retry_after: " << write_duration(g.retry_after) << "\n";
    if (g.blackhole_rate != 0) o << "      blackhole: " << number(g.blackhole_rate) << "\n";
    if (g.lost_response_rate != 0) o << "      lost_responses: " << number(g.lost_response_rate) << "\n";
    if (g.dns_failure_rate != 0) o << "      dns_failures: " << number(g.dns_failure_rate) << "\n";
    if (!g.down.empty()) {
      o << "      down:\n";
      for (const Window& w : g.down) o << "        - {" << window(w) << "}\n";
    }
    if (!g.incidents.empty()) {
      o << "      incidents:\n";
      for (const Incident& i : g.incidents) {
        o << "        - {" << window(i.window) << ", rate: " << number(i.rate) << ", status: " << i.status;
        if (i.retry_after >= Duration::zero()) o << ", retry_after: " << write_duration(i.retry_after);
        o << "}\n";
      }
    }
  }
}

}  // namespace

std::string write_scenario(const Scenario& s) {
  std::ostringstream o;
  o << "name: " << quoted(s.name) << "\n";
  if (!s.description.empty()) o << "description: " << quoted(s.description) << "\n";
  o << "seed: " << s.seed << "\n";
  o << "duration: " << write_duration(s.duration) << "\n";
  if (s.store != StoreKind::memory) o << "store: sqlite\n";
  platform(o, s.platform);
  world(o, s);
  if (!s.load.empty()) {
    o << "load:\n";
    for (const LoadSegment& l : s.load) {
      o << "  - {";
      if (l.burst > 0) {
        o << "burst: " << l.burst << ", at: " << t(l.from);
      } else {
        o << "rate: " << number(l.rate_per_s) << "/s, from: " << t(l.from) << ", to: " << t(l.to);
      }
      if (l.arrival != Arrival::poisson) o << ", arrival: constant";
      if (l.duplicates != 0) o << ", duplicates: " << number(l.duplicates);
      if (l.conflicts != 0) o << ", conflicts: " << number(l.conflicts);
      o << "}\n";
    }
  }
  if (!s.crashes.empty()) {
    o << "faults:\n";
    for (const CrashFault& c : s.crashes) {
      o << "  - {at: " << t(c.at) << ", crash: pod-" << c.pod;
      if (c.restart_after < kForever) o << ", restart_after: " << write_duration(c.restart_after);
      o << "}\n";
    }
  }
  if (!s.expect.empty()) {
    o << "expect:\n";
    for (const Expectation& e : s.expect) {
      o << "  " << e.metric << ": \"" << to_string(e.op) << " " << (e.percent ? number(e.value * 100) + "%" : number(e.value))
        << "\"\n";
    }
  }
  if (s.terminal_slack >= Duration::zero()) o << "oracle: {terminal_slack: " << write_duration(s.terminal_slack) << "}\n";
  return o.str();
}

}  // namespace relaysim::sim
