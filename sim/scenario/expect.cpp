#include "sim/scenario/expect.h"

#include <charconv>
#include <cmath>

namespace relaysim::sim {

const std::vector<MetricInfo>& metric_catalog() {
  static const std::vector<MetricInfo> catalog = {
      {"ingested", "requests acknowledged (created) by the platform"},
      {"delivered", "requests delivered (2xx)"},
      {"failed", "requests failed terminally (4xx, 410, no_url, ...)"},
      {"dead_lettered", "requests dead-lettered"},
      {"dead_lettered_deadline", "requests dead-lettered because their deadline passed"},
      {"failed_no_url", "requests failed because ServiceB does not know their cxid"},
      {"unresolved", "acknowledged requests not terminal when the run ended"},
      {"lost", "acknowledged requests missing from the store"},
      {"dlq_rate", "dead_lettered / ingested (a ratio; write it as a percentage)"},
      {"delivered_rate", "delivered / ingested"},
      {"violations", "invariant violations of every kind"},
      {"deadline_violations", "W-deadline violations"},
      {"duplicate_violations", "W-nodup violations"},
      {"retry_violations", "W-retry violations"},
      {"breaker_violations", "W-breaker violations"},
      {"url_violations", "W-url violations"},
      {"idempotency_violations", "W-idem violations"},
      {"loss_violations", "W-noloss violations"},
      {"endpoint_duplicates", "receipts of an already-accepted request at its endpoint, all causes"},
      {"duplicates_lost_response", "endpoint duplicates caused by a lost response"},
      {"duplicates_late_response", "endpoint duplicates caused by a response that came after the HTTP timeout"},
      {"duplicates_crash", "endpoint duplicates caused by a pod crashing mid-attempt"},
      {"duplicates_lease_expired", "endpoint duplicates caused by an expired lease"},
      {"duplicates_unexplained", "endpoint duplicates with no ambiguous outcome to explain them"},
      {"attempts", "HTTP attempts started"},
      {"attempts_per_request", "mean attempts per terminal request"},
      {"deferrals", "times a request was deferred as blocked_on_dependency"},
      {"rescued", "claims taken over after the previous claimant's lease expired"},
      {"stale_completions", "completions refused because their claim token was stale"},
      {"notifications", "tenant notifications (failed or dead-lettered)"},
      {"duplicate_ingests", "create calls answered with the original request"},
      {"conflicts", "create calls refused: same key, another payload"},
      {"rejected_ingests", "create calls no pod was up to take"},
      {"serviceb_calls", "calls to ServiceB"},
      {"serviceb_calls_in_outage", "calls to ServiceB during its outages"},
      {"serviceb_calls_while_open", "calls to ServiceB while the caller's breaker was open (always 0)"},
      {"serviceb_probes_in_outage", "half-open probes sent to ServiceB during its outages"},
      {"breaker_opened", "breaker transitions closed -> open, all pods"},
      {"breaker_closed", "breaker transitions to closed, all pods"},
      {"cache_hit_ratio", "URL cache hits / lookups"},
      {"latency_p50_s", "ingest-to-delivered latency, median, seconds"},
      {"latency_p99_s", "ingest-to-delivered latency, 99th percentile, seconds"},
      {"latency_max_s", "ingest-to-delivered latency, maximum, seconds"},
      {"crashes", "pod crashes"},
  };
  return catalog;
}

bool is_metric(std::string_view name) {
  for (const auto& m : metric_catalog()) {
    if (m.name == name) return true;
  }
  return false;
}

std::string_view to_string(CompareOp op) {
  switch (op) {
    case CompareOp::lt: return "<";
    case CompareOp::le: return "<=";
    case CompareOp::gt: return ">";
    case CompareOp::ge: return ">=";
    case CompareOp::eq: return "==";
    case CompareOp::ne: return "!=";
  }
  return "?";
}

bool parse_comparison(std::string_view s, CompareOp& op, double& value, bool& percent) {
  auto trim = [](std::string_view& v) {
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  };
  trim(s);
  op = CompareOp::eq;
  static constexpr std::pair<std::string_view, CompareOp> kOps[] = {
      {"<=", CompareOp::le}, {">=", CompareOp::ge}, {"==", CompareOp::eq}, {"!=", CompareOp::ne},
      {"<", CompareOp::lt},  {">", CompareOp::gt},  {"=", CompareOp::eq}};
  for (const auto& [text, o] : kOps) {
    if (s.substr(0, text.size()) == text) {
      op = o;
      s.remove_prefix(text.size());
      break;
    }
  }
  trim(s);
  percent = !s.empty() && s.back() == '%';
  if (percent) s.remove_suffix(1);
  trim(s);
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(value)) return false;
  if (percent) value /= 100.0;
  return true;
}

bool holds(const Expectation& e, double actual) {
  // Ratios are compared with a little tolerance for the rounding of what was written.
  const double eps = e.percent ? 1e-12 : 0.0;
  switch (e.op) {
    case CompareOp::lt: return actual < e.value;
    case CompareOp::le: return actual <= e.value + eps;
    case CompareOp::gt: return actual > e.value;
    case CompareOp::ge: return actual + eps >= e.value;
    case CompareOp::eq: return std::fabs(actual - e.value) <= eps;
    case CompareOp::ne: return std::fabs(actual - e.value) > eps;
  }
  return false;
}

}  // namespace relaysim::sim
