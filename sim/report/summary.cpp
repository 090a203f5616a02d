#include "sim/report/summary.h"

#include <cinttypes>
#include <cstdio>
#include <string>

#include "sim/scenario/expect.h"

namespace relaysim::sim {

using namespace relaysim::webhook;

namespace {
std::string fmt(const char* f, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, args...);
  return buf;
}
std::string hex(std::uint64_t v) { return fmt("%016" PRIx64, v); }
std::string count(double v) { return fmt("%.0f", v); }
std::string pct(double ratio) { return fmt("%.3g%%", ratio * 100.0); }
}  // namespace

void print_summary(std::ostream& out, const RunResult& r, const WallStats& wall) {
  const Scenario& s = r.scenario;
  const Metrics& m = *r.metrics;
  const Oracle& o = *r.oracle;
  const auto& v = r.values;
  out << "relaysim run: " << s.name << "  (" << s.file << ")\n";
  out << "  seed " << s.seed << "  fingerprint " << hex(r.fingerprint) << "  store "
      << (s.store == StoreKind::sqlite ? "sqlite" : "memory") << "\n";
  out << "  virtual " << format_time(r.end) << (r.drained ? " (nothing left to do)" : "") << " in "
      << fmt("%.2f", wall.seconds) << " s wall;  " << r.events << " events, "
      << fmt("%.3g", wall.seconds > 0 ? static_cast<double>(r.events) / wall.seconds : 0.0) << " events/s, "
      << fmt("%.3g", wall.seconds > 0 ? v.at("ingested") / wall.seconds : 0.0) << " requests/s\n\n";

  out << "Requests\n";
  out << "  ingested " << count(v.at("ingested")) << "  (duplicate creates " << count(v.at("duplicate_ingests"))
      << ", conflicts " << count(v.at("conflicts")) << ", rejected with no pod up " << count(v.at("rejected_ingests"))
      << ")\n";
  for (int st = static_cast<int>(Status::delivered); st < kStatusCount; ++st) {
    for (int re = 0; re < kReasonCount; ++re) {
      const std::uint64_t n = m.terminal[st][re];
      if (n == 0) continue;
      out << "  " << fmt("%-14s", std::string(to_string(static_cast<Status>(st))).c_str()) << " "
          << fmt("%-13s", std::string(to_string(static_cast<Reason>(re))).c_str()) << " " << n << "\n";
    }
  }
  out << "  not terminal at the end " << r.unresolved << ",  lost " << o.lost() << ",  tenant notifications "
      << m.notifications << "\n";
  out << "  attempts " << m.attempts << "  (per terminal request: mean " << fmt("%.2f", v.at("attempts_per_request"))
      << ";";
  for (std::size_t n = 0; n < m.attempts_per_request.size(); ++n) {
    if (m.attempts_per_request[n] == 0) continue;
    out << " " << n << (n + 1 == m.attempts_per_request.size() ? "+" : "") << ":" << m.attempts_per_request[n];
  }
  out << ")\n";
  out << "  deferred on ServiceB " << m.deferrals << ",  rescued claims " << o.rescued_claims()
      << ",  stale completions fenced off " << o.stale_completions() << "\n";
  const LatencyHistogram& h = m.delivery_latency;
  out << "  ingest->delivered latency  p50 " << format_duration(h.quantile(0.5)) << "  p90 "
      << format_duration(h.quantile(0.9)) << "  p99 " << format_duration(h.quantile(0.99)) << "  p99.9 "
      << format_duration(h.quantile(0.999)) << "  max " << format_duration(h.max()) << "\n\n";

  out << "ServiceB\n";
  out << "  calls " << m.serviceb_calls << ",  URL cache hit ratio " << pct(v.at("cache_hit_ratio")) << "\n";
  out << "  calls during outages " << m.serviceb_calls_in_outage << ": "
      << m.serviceb_calls_in_outage_by_state[static_cast<int>(BreakerState::closed)]
      << " while closed (before the breaker tripped), "
      << m.serviceb_calls_in_outage_by_state[static_cast<int>(BreakerState::half_open)] << " half-open probes, "
      << m.serviceb_calls_in_outage_by_state[static_cast<int>(BreakerState::open)] << " while open\n";
  out << "  breaker opened " << m.breaker_opened << ", closed " << m.breaker_closed << "\n";
  std::size_t shown = 0;
  for (const auto& t : m.transitions) {
    if (shown++ == 12) {
      out << "    ... (" << m.transitions.size() - 12 << " more in the JSON)\n";
      break;
    }
    out << "    " << fmt("%-16s", format_time(t.at).c_str()) << " pod " << t.pod << "  " << to_string(t.from) << " -> "
        << to_string(t.to) << "\n";
  }
  out << "\nEndpoint duplicates " << count(v.at("endpoint_duplicates")) << ":";
  for (int c = 0; c < kDuplicateCauseCount; ++c) {
    out << "  " << to_string(static_cast<DuplicateCause>(c)) << " " << o.duplicates(static_cast<DuplicateCause>(c));
  }
  out << "\n\nInvariants\n";
  for (int i = 0; i < kInvariantCount; ++i) {
    const auto inv = static_cast<Invariant>(i);
    const std::uint64_t n = o.violations(inv);
    out << "  " << (n == 0 ? "ok  " : "FAIL") << " " << fmt("%-11s", std::string(invariant_id(inv)).c_str())
        << invariant_title(inv);
    if (n != 0) out << "  (" << n << " violations)";
    out << "\n";
  }
  for (const Violation& x : o.examples()) {
    out << "       " << invariant_id(x.invariant) << " at " << format_time(x.at);
    if (x.request != 0) out << " request " << x.request;
    out << ": " << x.what << "\n";
  }
  if (!r.expectations.empty()) {
    out << "\nExpectations\n";
    for (const auto& e : r.expectations) {
      out << "  " << (e.ok ? "ok  " : "FAIL") << " " << e.expr << "   (actual " << fmt("%.6g", e.actual) << ")\n";
    }
  }
  if (r.stalled()) {
    out << "\nSTALL: the event queue ran dry at " << format_time(r.end) << " with " << r.unresolved
        << " requests still open\n";
  }
  if (r.hit_event_limit) out << "\nLIVELOCK: stopped by the event limit at " << format_time(r.end) << "\n";
  out << "\nVerdict: " << (r.pass() ? "PASS" : "FAIL") << "\n";
}

nlohmann::json to_json(const RunResult& r, const WallStats& wall) {
  using nlohmann::json;
  const Scenario& s = r.scenario;
  const Oracle& o = *r.oracle;
  const Metrics& m = *r.metrics;
  const auto& v = r.values;
  json j;
  j["scenario"] = s.name;
  j["file"] = s.file;
  j["seed"] = s.seed;
  j["fingerprint"] = hex(r.fingerprint);
  j["store"] = s.store == StoreKind::sqlite ? "sqlite" : "memory";
  j["verdict"] = r.pass() ? "pass" : "fail";
  j["stalled"] = r.stalled();
  j["virtual_seconds"] = to_seconds(r.end);
  j["wall_seconds"] = wall.seconds;
  j["events"] = r.events;
  j["events_per_wall_second"] = wall.seconds > 0 ? static_cast<double>(r.events) / wall.seconds : 0.0;
  j["requests_per_wall_second"] = wall.seconds > 0 ? v.at("ingested") / wall.seconds : 0.0;
  json inv = json::array();
  for (int i = 0; i < kInvariantCount; ++i) {
    const auto id = static_cast<Invariant>(i);
    json examples = json::array();
    for (const Violation& x : o.examples()) {
      if (x.invariant != id) continue;
      examples.push_back({{"request", x.request}, {"at_seconds", to_seconds(x.at)}, {"what", x.what}});
    }
    inv.push_back({{"id", invariant_id(id)}, {"ok", o.violations(id) == 0}, {"violations", o.violations(id)},
                   {"examples", examples}});
  }
  j["invariants"] = inv;
  json ex = json::array();
  for (const auto& e : r.expectations) ex.push_back({{"expr", e.expr}, {"ok", e.ok}, {"actual", e.actual}});
  j["expectations"] = ex;
  j["requests"] = {{"ingested", v.at("ingested")},       {"delivered", v.at("delivered")},
                   {"failed", v.at("failed")},           {"dead_lettered", v.at("dead_lettered")},
                   {"lost", v.at("lost")},               {"unresolved", v.at("unresolved")},
                   {"duplicate_ingests", v.at("duplicate_ingests")}, {"conflicts", v.at("conflicts")}};
  json by = json::object();
  for (int st = static_cast<int>(Status::delivered); st < kStatusCount; ++st) {
    for (int re = 0; re < kReasonCount; ++re) {
      if (m.terminal[st][re] == 0) continue;
      by[std::string(to_string(static_cast<Status>(st)))][std::string(to_string(static_cast<Reason>(re)))] =
          m.terminal[st][re];
    }
  }
  j["requests"]["by_state_and_reason"] = by;
  json transitions = json::array();
  for (const auto& t : m.transitions) {
    transitions.push_back({{"at_seconds", to_seconds(t.at)}, {"pod", t.pod}, {"from", to_string(t.from)},
                           {"to", to_string(t.to)}});
  }
  j["serviceb"] = {{"calls", m.serviceb_calls},
                   {"calls_in_outage", m.serviceb_calls_in_outage},
                   {"calls_while_open", v.at("serviceb_calls_while_open")},
                   {"probes_in_outage", v.at("serviceb_probes_in_outage")},
                   {"breaker_opened", m.breaker_opened},
                   {"breaker_closed", m.breaker_closed},
                   {"cache_hit_ratio", v.at("cache_hit_ratio")},
                   {"transitions", transitions}};
  j["latency_seconds"] = {{"p50", v.at("latency_p50_s")},
                          {"p90", to_seconds(m.delivery_latency.quantile(0.9))},
                          {"p99", v.at("latency_p99_s")},
                          {"max", v.at("latency_max_s")}};
  json dup = json::object();
  for (int c = 0; c < kDuplicateCauseCount; ++c) {
    dup[std::string(to_string(static_cast<DuplicateCause>(c)))] = o.duplicates(static_cast<DuplicateCause>(c));
  }
  j["endpoint_duplicates"] = dup;
  j["metrics"] = v;
  return j;
}

}  // namespace relaysim::sim
