#include "sim/outbox/report.h"

#include <nlohmann/json.hpp>
#include <string>

#include "sim/report/text.h"

namespace relaysim::sim::outbox {

using namespace relaysim::outbox;

namespace {
std::string n(double v) { return format_count(v); }
}  // namespace

void Report::print(std::ostream& out, double) const {
  const Metrics& m = f_.metrics;
  out << "Business operations\n";
  out << "  made " << m.operations << ":  committed " << m.operation_outcomes[0] << ", rolled back "
      << m.operation_outcomes[1] << ", shard unavailable " << m.operation_outcomes[2] << ", no pod up "
      << m.operation_outcomes[3] << "\n\n";

  out << "Messages (outbox rows)\n";
  out << "  committed " << m.committed << ":  handled " << n(get(metric("handled"))) << ", failed rejected "
      << n(get(metric("failed_rejected"))) << ", failed exhausted " << n(get(metric("failed_exhausted")))
      << ",  not final at the end " << f_.unresolved << " (stuck " << f_.stuck << "),  lost " << f_.lost << "\n";
  out << "  attempts: " << format_value(Unit::number, get(metric("mean_attempts"))) << " per final message, retries "
      << m.retries << ", rescued by the rescuer " << m.rescued << "\n";
  if (m.latency.count() > 0) {
    out << "  commit->handled  p50 " << format_duration(m.latency.quantile(0.5)) << "  p99 "
        << format_duration(m.latency.quantile(0.99)) << "  max " << format_duration(m.latency.max()) << "\n";
  }

  out << "\nLeaders\n";
  out << "  terms " << m.leader_terms << ",  stale writes kept out by the fence " << f_.stale_writes
      << ",  two pods believing they led one shard for " << format_value(Unit::seconds, get(metric("split_brain_s")))
      << "\n";
  std::size_t shown = 0;
  for (const Term& t : m.terms) {
    if (shown++ == 12) {
      out << "    ... (" << m.terms.size() - 12 + m.terms_dropped << " more in the JSON)\n";
      break;
    }
    out << "    shard " << t.shard << "  pod-" << t.pod - 1 << "  token " << t.token << "  from " << format_time(t.from)
        << (t.to == kTimeNever ? std::string("  to the end") : "  to " + format_time(t.to)) << "\n";
  }
  out << "  scans " << m.scans << ",  publishes " << n(get(metric("publishes"))) << " (timed out "
      << m.publishes[static_cast<int>(Produced::timeout)] << ", refused " << m.publishes[static_cast<int>(Produced::unavailable)]
      << ")\n";

  out << "\nLog (ground truth)\n";
  out << "  records written " << m.records << ",  duplicates " << n(get(metric("duplicate_records"))) << ":";
  for (int c = 0; c < kDuplicateCauseCount; ++c) {
    out << "  " << to_string(static_cast<DuplicateCause>(c)) << " " << f_.duplicates[static_cast<std::size_t>(c)];
  }
  out << "\n  delivered " << m.deliveries << ", redelivered after rebalances " << m.redeliveries << ";  rebalances "
      << m.rebalances << ", evictions " << m.evictions[0] + m.evictions[1] << " (late polls " << m.evictions[1] << ")\n";

  out << "\nConsumers\n";
  out << "  re-locks: locked " << m.relocks[0] << ", waited for the mark " << m.relocks[1] << ", let go (moved on) "
      << m.relocks[2] << "\n";
  out << "  handlings " << n(get(metric("handlings"))) << ":";
  for (int h = 0; h < kHandledCount; ++h) out << " " << to_string(static_cast<Handled>(h)) << " " << m.handlings[h];
  out << "\n  effects applied " << m.effects << " (ground truth),  inbox dedups " << m.inbox_dedups
      << ",  handler deaths " << m.handler_deaths << "\n";
  out << "  store calls failed " << m.store_failures << ",  crashes " << m.crashes << ",  pauses " << m.pauses << "\n\n";
}

void Report::to_json(nlohmann::json& j, double wall) const {
  using nlohmann::json;
  const Metrics& m = f_.metrics;
  j["messages_per_wall_second"] = wall > 0 ? get(metric("messages")) / wall : 0.0;
  json by = json::object();
  for (int st = 2; st < kStatusCount; ++st) {
    for (int re = 0; re < kReasonCount; ++re) {
      if (m.final[st][re] != 0) by[std::string(to_string(static_cast<Status>(st)))][std::string(to_string(static_cast<Reason>(re)))] = m.final[st][re];
    }
  }
  j["messages"] = {{"by_state_and_reason", by}};
  json terms = json::array();
  for (const Term& t : m.terms) {
    terms.push_back({{"shard", t.shard},
                     {"pod", t.pod - 1},
                     {"token", t.token},
                     {"from_seconds", to_seconds(t.from)},
                     {"to_seconds", t.to == kTimeNever ? json(nullptr) : json(to_seconds(t.to))}});
  }
  j["leader_terms"] = terms;
  j["leader_terms_dropped"] = m.terms_dropped;
  json dup = json::object();
  for (int c = 0; c < kDuplicateCauseCount; ++c) dup[std::string(to_string(static_cast<DuplicateCause>(c)))] = f_.duplicates[static_cast<std::size_t>(c)];
  j["duplicate_records"] = dup;
  json handlings = json::object();
  for (int h = 0; h < kHandledCount; ++h) handlings[std::string(to_string(static_cast<Handled>(h)))] = m.handlings[h];
  j["handlings"] = handlings;
  j["relocks"] = {{"locked", m.relocks[0]}, {"waited", m.relocks[1]}, {"let_go", m.relocks[2]}};
}

}  // namespace relaysim::sim::outbox
