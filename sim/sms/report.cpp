#include "sim/sms/report.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "model/core/assert.h"
#include "sim/report/text.h"

namespace relaysim::sim::sms {

using namespace relaysim::sms;

namespace {
std::string name(auto v) { return std::string(to_string(v)); }
}  // namespace

void Report::print(std::ostream& out, double) const {
  print_requests(out);
  print_messages(out);
  print_sending(out);
  print_marketing(out);
  print_providers(out);
}

// What the clients asked and how they were answered.
void Report::print_requests(std::ostream& out) const {
  const Metrics& m = f_.metrics;
  out << "Requests\n";
  // The calls made include campaign requests (answered under Marketing, not on the line below).
  out << "  made " << m.calls << "  (campaign requests " << m.campaign_calls << ", repeats " << m.repeats
      << ", client timeouts " << m.client_timeouts << ", no pod up " << m.rejected << ")\n";
  out << "  answered: accepted " << m.outcomes[static_cast<int>(AcceptOutcome::accepted)] << ", duplicate "
      << m.outcomes[static_cast<int>(AcceptOutcome::duplicate)] << ", conflict "
      << m.outcomes[static_cast<int>(AcceptOutcome::conflict)] << ", over quota "
      << m.outcomes[static_cast<int>(AcceptOutcome::quota_exhausted)] << ", revoked "
      << m.outcomes[static_cast<int>(AcceptOutcome::revoked)] << ", not resendable "
      << m.outcomes[static_cast<int>(AcceptOutcome::not_resendable)] << ", store unavailable " << m.unavailable << "\n";
  if (m.outcomes[static_cast<int>(AcceptOutcome::duplicate)] != 0) {
    out << "  duplicates answered with the first request's outcome:";
    for (int a = 0; a < kAnswerNames.count; ++a) out << " " << name(static_cast<Answer>(a)) << " " << m.repeat_answers[a];
    out << "\n";
  }
  out << "  refused for the token:";
  for (int a = 1; a < kAuthFaultCount; ++a) {
    if (m.auth[a] != 0) out << " " << name(static_cast<AuthFault>(a)) << " " << m.auth[a];
  }
  out << (get(metric("auth_refused")) == 0 ? " none\n\n" : "\n\n");
}

// How the accepted messages ended, and the quotas they used.
void Report::print_messages(std::ostream& out) const {
  const Metrics& m = f_.metrics;
  out << "Messages\n";
  out << "  accepted " << m.accepted << "  (single " << m.accepted_by_kind[0] << ", bulk " << m.accepted_by_kind[1]
      << ", scheduled " << m.accepted_by_kind[2] << ", marketing " << m.accepted_by_kind[3] << ", resend "
      << m.accepted_by_kind[4] << ")\n";
  for (int st = static_cast<int>(kFirstFinal); st < kStatusCount; ++st) {
    for (int re = 0; re < kReasonCount; ++re) {
      const std::uint64_t n = m.final[st][re];
      if (n == 0) continue;
      out << "  " << fmt("%-12s", name(static_cast<Status>(st)).c_str()) << " " << fmt("%-14s", name(static_cast<Reason>(re)).c_str())
          << " " << n << "\n";
    }
  }
  out << "  not final at the end " << f_.unresolved << ",  lost " << f_.lost << ",  refunds " << f_.refunds << "\n";
  const LatencyHistogram& h = m.submit_latency;
  if (h.count() > 0) {
    out << "  due->provider accept  p50 " << format_duration(h.quantile(0.5)) << "  p99 " << format_duration(h.quantile(0.99))
        << "  max " << format_duration(h.max()) << "\n";
  }
  if (m.admin_queries + m.admin_actions[0][0] + m.admin_actions[0][1] + m.admin_actions[1][0] + m.admin_actions[1][1] != 0) {
    out << "  back office: grants approved " << m.admin_actions[0][1] << ", revoked " << m.admin_actions[1][1]
        << " (refused " << m.admin_actions[0][0] + m.admin_actions[1][0] << "), queries " << m.admin_queries << "\n";
  }
  out << "\nQuota (the period the run ended in)\n";
  for (const Figures::Quota& q : f_.quotas) {
    out << "  " << fmt("%-16s", q.business.c_str()) << " used " << q.used << " of " << q.quota << "\n";
  }
}

// The submits to providers: their outcomes, paths, rescans, limits and async periods.
void Report::print_sending(std::ostream& out) const {
  const Metrics& m = f_.metrics;
  out << "\nSending\n";
  out << "  submits " << format_count(get(metric("submits"))) << ":";
  for (int c = 0; c < kSubmitClassCount; ++c) {
    if (m.submits_by_class[c] != 0) out << " " << name(static_cast<SubmitClass>(c)) << " " << m.submits_by_class[c];
  }
  out << "\n  by path: sync " << m.sends_by_path[0] << ", async " << m.sends_by_path[1] << ", probe " << m.sends_by_path[2]
      << ";  failovers " << m.failovers << ",  retry alerts " << m.retry_alerts << ",  store calls failed "
      << m.store_failures << "\n";
  out << "  rescans: unknown resent " << m.claims_by_prior[static_cast<int>(Status::unknown)] << ", leases taken over "
      << m.claims_by_prior[static_cast<int>(Status::in_flight)] << ", receipts overdue "
      << m.claims_by_prior[static_cast<int>(Status::submitted)] << "\n";
  out << "  limits:";
  bool any = false;
  for (int v = 0; v < kLimitViaNames.count; ++v) {
    for (int a = 1; a >= 0; --a) {
      if (m.limits[v][a] == 0) continue;
      any = true;
      out << " " << name(static_cast<LimitVia>(v)) << (a ? " admitted " : " held ") << m.limits[v][a] << ";";
    }
  }
  if (any) {
    out << "\n    checked against the definitions " << format_count(get(metric("limit_checked"))) << ", violations "
        << format_count(get(metric("limit_violations"))) << "\n";
  } else {
    out << " none configured\n";
  }
  out << "  async mode: entered " << m.async_entered << ", left " << m.async_left << ", "
      << format_value(Unit::seconds, get(metric("async_s"))) << " pod-time\n";
  std::size_t shown = 0;
  for (const AsyncPeriod& p : m.periods) {
    RELAYSIM_ASSERT(p.pod >= 1, "gateway pods are numbered from 1");
    if (shown++ == 12) {
      out << "    ... (" << m.periods.size() - 12 + m.periods_dropped << " more in the JSON)\n";
      break;
    }
    out << "    pod-" << p.pod - 1 << "  " << format_time(p.entered) << " by " << name(p.entered_by) << "  ->  "
        << (p.left == kTimeNever ? std::string("still async at the end")
                                 : format_time(p.left) + " by " + (p.left_by == AsyncRule::none ? "crash" : name(p.left_by)))
        << "\n";
  }
}

// The campaigns, when there were any.
void Report::print_marketing(std::ostream& out) const {
  const Metrics& m = f_.metrics;
  if (m.campaigns + m.campaigns_refused != 0) {
    out << "\nMarketing\n";
    out << "  campaigns " << m.campaigns << " (refused " << m.campaigns_refused << "):  done "
        << get(metric("campaigns_done")) << ", stopped " << get(metric("campaigns_stopped")) << ", still expanding "
        << m.campaigns - static_cast<std::uint64_t>(get(metric("campaigns_done")) + get(metric("campaigns_stopped")))
        << ";  chunks " << m.campaign_chunks << "\n";
    RELAYSIM_ASSERT(m.campaign_stops.size() == m.campaign_states.size(), "a stop reason for every campaign");
    for (std::size_t c = 0; c < m.campaign_states.size(); ++c) {
      if (m.campaign_states[c] == CampaignState::stopped) {
        out << "    campaign " << c + 1 << " stopped: " << name(m.campaign_stops[c]) << "\n";
      }
    }
    out << "  users chosen " << m.campaign_chosen << ", skipped (opted out) " << m.campaign_skipped << ", messages "
        << m.accepted_by_kind[static_cast<int>(Kind::marketing)] << "\n";
    out << "  suppressed: opted out " << get(metric("suppressed_opted_out")) << ", quiet hours "
        << get(metric("suppressed_quiet_hours")) << ", frequency cap " << get(metric("suppressed_frequency_cap"))
        << "\n  quiet hours: scheduled past them when made " << m.campaign_quiet << ", put back when due "
        << m.marketing_deferred << ";  opt-outs during the run " << m.opt_outs << "\n";
  }
}

// What the providers really did (the world's truth), and the duplicates it explains.
void Report::print_providers(std::ostream& out) const {
  const Metrics& m = f_.metrics;
  out << "\nProviders (ground truth)\n  SMS sent " << f_.sent << ";  submits by fate:";
  for (int fate = 0; fate < kFateCount; ++fate) {
    if (m.fates[fate] != 0) out << " " << name(static_cast<Fate>(fate)) << " " << m.fates[fate];
  }
  out << "\n  duplicate SMS " << format_count(get(metric("duplicate_sms"))) << ":";
  for (int c = 0; c < kDuplicateCauseCount; ++c) {
    out << "  " << name(static_cast<DuplicateCause>(c)) << " " << f_.duplicates[static_cast<std::size_t>(c)];
  }
  out << "\n\n";
}

void Report::to_json(nlohmann::json& j, double wall) const {
  using nlohmann::json;
  const Metrics& m = f_.metrics;
  j["messages_per_wall_second"] = wall > 0 ? get(metric("accepted")) / wall : 0.0;
  json by = json::object();
  for (int st = static_cast<int>(kFirstFinal); st < kStatusCount; ++st) {
    for (int re = 0; re < kReasonCount; ++re) {
      if (m.final[st][re] != 0) by[name(static_cast<Status>(st))][name(static_cast<Reason>(re))] = m.final[st][re];
    }
  }
  j["messages"] = {{"by_state_and_reason", by}};
  json quotas = json::array();
  for (const Figures::Quota& q : f_.quotas) quotas.push_back({{"business", q.business}, {"quota", q.quota}, {"used", q.used}});
  j["quota"] = quotas;
  json limits = json::object();
  for (int v = 0; v < kLimitViaNames.count; ++v) {
    limits[name(static_cast<LimitVia>(v))] = {{"admitted", m.limits[v][1]}, {"held", m.limits[v][0]}};
  }
  j["limits"] = limits;
  json periods = json::array();
  for (const AsyncPeriod& p : m.periods) {
    RELAYSIM_ASSERT(p.pod >= 1 && (p.left == kTimeNever || p.left >= p.entered), "an async period of a pod, ending no earlier than it began");
    periods.push_back({{"pod", p.pod - 1},
                       {"entered_seconds", to_seconds(p.entered)},
                       {"entered_by", name(p.entered_by)},
                       {"left_seconds", p.left == kTimeNever ? json(nullptr) : json(to_seconds(p.left))},
                       {"left_by", p.left == kTimeNever ? json(nullptr) : json(p.left_by == AsyncRule::none ? "crash" : name(p.left_by))}});
  }
  j["async_periods"] = periods;
  j["async_periods_dropped"] = m.periods_dropped;
  json fates = json::object();
  for (int fate = 0; fate < kFateCount; ++fate) fates[name(static_cast<Fate>(fate))] = m.fates[fate];
  j["provider_fates"] = fates;
  json dup = json::object();
  for (int c = 0; c < kDuplicateCauseCount; ++c) dup[name(static_cast<DuplicateCause>(c))] = f_.duplicates[static_cast<std::size_t>(c)];
  j["duplicate_sms"] = dup;
  json repeats = json::object();
  for (int a = 0; a < kAnswerNames.count; ++a) repeats[name(static_cast<Answer>(a))] = m.repeat_answers[a];
  j["duplicate_requests_answered"] = repeats;
  json campaigns = json::array();
  RELAYSIM_ASSERT(m.campaign_stops.size() == m.campaign_states.size(), "a stop reason for every campaign");
  for (std::size_t c = 0; c < m.campaign_states.size(); ++c) {
    campaigns.push_back({{"id", c + 1},
                         {"state", name(m.campaign_states[c])},
                         {"stopped_by", m.campaign_states[c] == CampaignState::stopped ? json(name(m.campaign_stops[c])) : json(nullptr)}});
  }
  j["campaigns"] = campaigns;
}

}  // namespace relaysim::sim::sms
