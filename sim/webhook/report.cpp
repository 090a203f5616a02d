#include "sim/webhook/report.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "model/core/assert.h"

#include "sim/report/text.h"
#include "sim/timeline.h"
#include "sim/webhook/oracle.h"

namespace relaysim::sim::webhook {

using namespace relaysim::webhook;

std::vector<TimelineEvent> world_timeline(const WebhookSpec& spec, const std::vector<BreakerTransition>& transitions) {
  std::vector<TimelineEvent> timeline;
  add_to_timeline(spec.serviceb.outages, "serviceb", timeline);
  for (const UrlChange& c : spec.serviceb.url_changes) {
    timeline.push_back({c.at, {}, "url_change", "serviceb", fmt("%g%% of the cxids get a new URL", 100 * c.fraction)});
  }
  for (const EndpointGroup& g : spec.endpoints) {
    for (const Window& w : g.down) timeline.push_back({w.at, w.length, "down", "endpoints " + g.name, "connections refused", true});
    for (const Incident& i : g.incidents) {
      timeline.push_back({i.window.at, i.window.length, "incident", "endpoints " + g.name,
                          fmt("%g%% of calls answered %d", 100 * i.rate, i.status), true});
    }
  }
  for (const BreakerTransition& t : transitions) {
    timeline.push_back({t.at, {}, "breaker", "pod-" + std::to_string(t.pod),
                        std::string(to_string(t.from)) + " -> " + std::string(to_string(t.to))});
  }
  return timeline;
}

void Report::print(std::ostream& out, double) const {
  print_requests(out);
  print_serviceb(out);
}

// How the requests ended, their attempts and their latency.
void Report::print_requests(std::ostream& out) const {
  const Metrics& m = f_.metrics;
  out << "Requests\n";
  out << "  ingested " << format_count(get(metric("ingested"))) << "  (duplicate creates " << format_count(get(metric("duplicate_ingests")))
      << ", conflicts " << format_count(get(metric("conflicts"))) << ", rejected with no pod up "
      << format_count(get(metric("rejected_ingests"))) << ")\n";
  for (int st = static_cast<int>(Status::delivered); st < kStatusCount; ++st) {
    for (int re = 0; re < kReasonCount; ++re) {
      const std::uint64_t n = m.terminal[st][re];
      if (n == 0) continue;
      out << "  " << fmt("%-14s", std::string(to_string(static_cast<Status>(st))).c_str()) << " "
          << fmt("%-13s", std::string(to_string(static_cast<Reason>(re))).c_str()) << " " << n << "\n";
    }
  }
  out << "  not terminal at the end " << f_.unresolved << ",  lost " << f_.oracle.lost << ",  tenant notifications "
      << m.notifications << "\n";
  // What on-call looks at first: who is still waiting, and for how long.
  if (f_.unresolved > 0) {
    out << "  of those open at the end: " << f_.stuck << " to endpoint groups down for good";
    if (!std::isnan(f_.oldest_open_age_s)) {
      out << ";  the oldest of the rest acknowledged " << format_value(Unit::seconds, f_.oldest_open_age_s) << " before the end";
    }
    out << "\n";
  }
  if (get(metric("replayed")) + get(metric("replays_refused")) > 0) {
    out << "  replayed " << format_count(get(metric("replayed"))) << " (each ends again, above),  replays refused "
        << format_count(get(metric("replays_refused"))) << "\n";
  }
  if (m.terminal_requests > 0) {
    out << "  " << (f_.unresolved == 0 ? "all requests terminal by " : "the last request became terminal at ")
        << format_time(m.last_terminal_at) << "\n";
  }
  out << "  attempts " << m.attempts << "  (per terminal request: mean " << format_value(Unit::number, get(metric("attempts_per_request")))
      << ", max " << m.max_attempts << ";";
  for (std::size_t n = 0; n < m.attempts_per_request.size(); ++n) {
    if (m.attempts_per_request[n] == 0) continue;
    out << " " << n << (n + 1 == m.attempts_per_request.size() ? "+" : "") << ":" << m.attempts_per_request[n];
  }
  out << ")\n";
  out << "  deferred on ServiceB " << m.deferrals << ",  rescued claims " << f_.oracle.rescued
      << ",  stale completions fenced off " << f_.oracle.stale << "\n";
  if (m.store_failures > 0) {
    out << "  store calls failed " << m.store_failures << "  (creates refused, not acknowledged: "
        << m.created_by_outcome[static_cast<int>(IngestStatus::unavailable)] << ")\n";
  }
  // Percentiles are read inside a histogram bucket: they are good to its width, not to the ms.
  const auto line = [&out](const char* what, const LatencyHistogram& h, const char* none) {
    out << "  " << what;
    if (h.count() == 0) {
      out << "  n/a (" << none << ")\n";
      return;
    }
    out << "  mean " << format_value(Unit::seconds, h.mean_seconds()) << "  p50 " << format_duration(h.quantile(0.5))
        << "  p90 " << format_duration(h.quantile(0.9)) << "  p99 " << format_duration(h.quantile(0.99)) << "  p99.9 "
        << format_duration(h.quantile(0.999)) << "  max " << format_duration(h.max()) << "\n";
  };
  line("ingest->delivered latency", m.delivery_latency, "nothing was delivered");
  line("ingest->first attempt    ", m.first_wait, "nothing was attempted");
  out << "  (percentiles to " << fmt("%.2g", LatencyHistogram::kResolution * 100) << "%, mean and max exact)\n\n";
}

// ServiceB's calls and the breakers around it, then the endpoints' duplicates.
void Report::print_serviceb(std::ostream& out) const {
  const Metrics& m = f_.metrics;
  out << "ServiceB\n";
  out << "  calls " << m.serviceb_calls << ",  URL cache hit ratio " << format_value(Unit::ratio, get(metric("cache_hit_ratio")))
      << "\n";
  out << "  calls during outages " << m.serviceb_calls_in_outage << ": "
      << m.serviceb_calls_in_outage_by_state[static_cast<int>(BreakerState::closed)]
      << " while closed (before the breaker tripped), "
      << m.serviceb_calls_in_outage_by_state[static_cast<int>(BreakerState::half_open)] << " half-open probes, "
      << m.serviceb_calls_in_outage_by_state[static_cast<int>(BreakerState::open)] << " while open\n";
  RELAYSIM_ASSERT(m.transitions_dropped == 0 || m.transitions.size() == Metrics::kTransitionsKept,
                  "transitions are dropped only once the kept list is full");
  out << "  breaker opened " << m.breaker_opened << ", closed " << m.breaker_closed << "\n";
  std::size_t shown = 0;
  for (const auto& t : m.transitions) {
    if (shown++ == 12) {
      out << "    ... (" << m.transitions.size() - 12 + m.transitions_dropped << " more"
          << (m.transitions_dropped == 0 ? " in the JSON" : "; the JSON keeps the first " + std::to_string(Metrics::kTransitionsKept))
          << ")\n";
      break;
    }
    out << "    " << fmt("%-16s", format_time(t.at).c_str()) << " pod " << t.pod << "  " << to_string(t.from) << " -> "
        << to_string(t.to) << "\n";
  }
  out << "\nEndpoint duplicates " << format_count(get(metric("endpoint_duplicates"))) << ":";
  for (int c = 0; c < kDuplicateCauseCount; ++c) {
    out << "  " << to_string(static_cast<DuplicateCause>(c)) << " " << f_.oracle.duplicates[static_cast<std::size_t>(c)];
  }
  out << "\n\n";
}

void Report::to_json(nlohmann::json& j, double wall) const {
  using nlohmann::json;
  const Metrics& m = f_.metrics;
  j["requests_per_wall_second"] = wall > 0 ? get(metric("ingested")) / wall : 0.0;
  j["requests"] = {{"ingested", get(metric("ingested"))},
                   {"delivered", get(metric("delivered"))},
                   {"failed", get(metric("failed"))},
                   {"dead_lettered", get(metric("dead_lettered"))},
                   {"lost", get(metric("lost"))},
                   {"unresolved", get(metric("unresolved"))},
                   {"duplicate_ingests", get(metric("duplicate_ingests"))},
                   {"conflicts", get(metric("conflicts"))},
                   {"unavailable_ingests", get(metric("unavailable_ingests"))},
                   {"store_failures", get(metric("store_failures"))},
                   {"attempts_per_request_mean", get(metric("attempts_per_request"))},
                   {"attempts_per_request_max", m.max_attempts},
                   {"last_terminal_seconds", to_seconds(m.last_terminal_at)}};
  json by = json::object();
  for (int st = static_cast<int>(Status::delivered); st < kStatusCount; ++st) {
    for (int re = 0; re < kReasonCount; ++re) {
      if (m.terminal[st][re] == 0) continue;
      by[std::string(to_string(static_cast<Status>(st)))][std::string(to_string(static_cast<Reason>(re)))] = m.terminal[st][re];
    }
  }
  j["requests"]["by_state_and_reason"] = by;
  json histogram = json::object();
  for (std::size_t n = 0; n < m.attempts_per_request.size(); ++n) {
    if (m.attempts_per_request[n] != 0) {
      histogram[std::to_string(n) + (n + 1 == m.attempts_per_request.size() ? "+" : "")] = m.attempts_per_request[n];
    }
  }
  j["requests"]["attempts_histogram"] = histogram;
  json transitions = json::array();
  for (const auto& t : m.transitions) {
    transitions.push_back({{"at_seconds", to_seconds(t.at)}, {"pod", t.pod}, {"from", to_string(t.from)}, {"to", to_string(t.to)}});
  }
  j["serviceb"] = {{"calls", m.serviceb_calls},
                   {"calls_in_outage", m.serviceb_calls_in_outage},
                   {"calls_while_open", get(metric("serviceb_calls_while_open"))},
                   {"probes_in_outage", get(metric("serviceb_probes_in_outage"))},
                   {"breaker_opened", m.breaker_opened},
                   {"breaker_closed", m.breaker_closed},
                   {"cache_hit_ratio", get(metric("cache_hit_ratio"))},
                   {"transitions", transitions},
                   {"transitions_dropped", m.transitions_dropped}};
  const LatencyHistogram& h = m.delivery_latency;
  auto seconds = [&](double v) { return json(detail::if_delivered(f_, v)); };  // NaN: null
  j["latency_seconds"] = {{"count", h.count()},
                          {"mean", seconds(h.mean_seconds())},
                          {"p50", seconds(to_seconds(h.quantile(0.5)))},
                          {"p90", seconds(to_seconds(h.quantile(0.9)))},
                          {"p99", seconds(to_seconds(h.quantile(0.99)))},
                          {"p99.9", seconds(to_seconds(h.quantile(0.999)))},
                          {"max", seconds(to_seconds(h.max()))}};
  json dup = json::object();
  for (int c = 0; c < kDuplicateCauseCount; ++c) {
    dup[std::string(to_string(static_cast<DuplicateCause>(c)))] = f_.oracle.duplicates[static_cast<std::size_t>(c)];
  }
  j["endpoint_duplicates"] = dup;
}

}  // namespace relaysim::sim::webhook
