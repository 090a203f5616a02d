#include "sim/sms/metrics.h"

#include <algorithm>

#include "model/core/assert.h"

namespace relaysim::sim::sms {

using namespace relaysim::sms;

void Metrics::on(const Answered& e) {
  const SendAnswer& a = e.answer;
  if (a.fault != AuthFault::none) {
    RELAYSIM_ASSERT(static_cast<std::size_t>(a.fault) < auth.size(), "a token's fault the table counts");
    ++auth[static_cast<std::size_t>(a.fault)];
  } else if (a.unavailable) {
    ++unavailable;
  } else {
    RELAYSIM_ASSERT(static_cast<std::size_t>(a.outcome) < outcomes.size(), "an accept outcome the table counts");
    ++outcomes[static_cast<std::size_t>(a.outcome)];
    if (a.outcome == AcceptOutcome::duplicate) ++repeat_answers[static_cast<std::size_t>(a.answer)];
  }
}

void Metrics::on(const Accepted& e) {
  if (e.result.outcome != AcceptOutcome::accepted) return;
  accepted += e.request.messages.size();
  RELAYSIM_ASSERT(!e.request.messages.empty(), "an accepted request carries a message");
  for (const NewMessage& m : e.request.messages) {
    RELAYSIM_ASSERT(static_cast<std::size_t>(m.kind) < accepted_by_kind.size(), "a message kind the table counts");
    ++accepted_by_kind[static_cast<std::size_t>(m.kind)];
  }
}

void Metrics::on(const CampaignAnswered& e) {
  if (!e.answer.taken()) {
    ++campaigns_refused;
    return;
  }
  if (e.answer.outcome != AcceptOutcome::accepted) return;
  ++campaigns;
  if (campaign_states.size() < e.answer.id) {
    campaign_states.resize(e.answer.id, CampaignState::expanding);
    campaign_stops.resize(e.answer.id, AcceptOutcome::accepted);
  }
  RELAYSIM_ASSERT(campaign_stops.size() == campaign_states.size(), "a stop reason for every campaign");
}

void Metrics::on(const CampaignExpanded& e) {
  ++campaign_chunks;
  if (!e.applied) return;
  campaign_chosen += e.chosen;
  campaign_skipped += e.skipped;
  if (e.outcome == AcceptOutcome::accepted) campaign_quiet += e.quiet;
  if (e.row.id >= 1 && e.row.id <= campaign_states.size()) {
    campaign_states[e.row.id - 1] = e.state;
    campaign_stops[e.row.id - 1] = e.outcome;
  }
}

void Metrics::on(const LimitDecided& e) {
  RELAYSIM_ASSERT(static_cast<std::size_t>(e.decision.via) < limits.size(), "a limit path the table counts");
  ++limits[static_cast<std::size_t>(e.decision.via)][e.decision.admitted ? 1 : 0];
}

void Metrics::on(const SubmitFinished& e) {
  RELAYSIM_ASSERT(static_cast<std::size_t>(e.outcome) < submits_by_class.size(), "a submit class the table counts");
  ++submits_by_class[static_cast<std::size_t>(e.outcome)];
  if (e.decision.step == Step::fail_over) ++failovers;
  if (e.provider < submits_by_provider.size()) {
    ++submits_by_provider[e.provider];
    if (e.decision.step == Step::fail_over) ++failovers_by_provider[e.provider];
  }
}

void Metrics::on(const Completed& e) {
  if (!e.applied) return;
  const Completion& c = e.completion;
  if (c.status == Status::submitted) submit_latency.add(c.at - e.row.send_at);
  if (!is_final(c.status)) return;
  RELAYSIM_ASSERT(static_cast<std::size_t>(c.status) < final.size() &&
                      static_cast<std::size_t>(c.reason) < final[0].size(),
                  "a final status and reason the table counts");
  ++final[static_cast<std::size_t>(c.status)][static_cast<std::size_t>(c.reason)];
  ++finals;
  last_final_at = std::max(last_final_at, c.at);
}

void Metrics::on(const ReceiptReceived& e) {
  ++receipts;
  if (e.outcome != ReceiptOutcome::applied) {
    ++receipts_late;
    return;
  }
  ++final[static_cast<std::size_t>(e.delivered ? Status::delivered : Status::undelivered)]
         [static_cast<std::size_t>(Reason::receipt)];
  ++finals;
  last_final_at = std::max(last_final_at, e.at);
}

void Metrics::close_period(std::uint32_t pod, Time at, AsyncRule rule) {
  RELAYSIM_ASSERT(pod >= 1, "gateway pods are numbered from 1");
  for (auto it = periods.rbegin(); it != periods.rend(); ++it) {
    if (it->pod == pod && it->left == kTimeNever) {
      it->left = at;
      it->left_by = rule;
      return;
    }
  }
}

void Metrics::on(const ModeChanged& e) {
  RELAYSIM_ASSERT(static_cast<std::size_t>(e.change.rule) < async_by_rule.size(), "an async rule the table counts");
  RELAYSIM_ASSERT(e.pod >= 1, "gateway pods are numbered from 1");
  ++async_by_rule[static_cast<std::size_t>(e.change.rule)];
  if (e.change.entered) {
    ++async_entered;
    if (periods.size() < kPeriodsKept) {
      periods.push_back(AsyncPeriod{e.pod, e.at, kTimeNever, e.change.rule, AsyncRule::none});
    } else {
      ++periods_dropped;
    }
  } else {
    ++async_left;
    close_period(e.pod, e.at, e.change.rule);
  }
}

void Metrics::on(const ProcessCrashed& e) {
  ++crashes;
  close_period(e.pod + 1, e.at, AsyncRule::none);  // a pod restarts in sync mode
}

void Metrics::on(const ClientCalled& e) {
  ++calls;
  if (e.repeat) ++repeats;
  if (e.campaign) ++campaign_calls;
}

double detail::latency_quantile_s(const Figures& f, double q) {
  RELAYSIM_ASSERT(q > 0 && q <= 100, "a percentile is in (0, 100]");
  if (f.metrics.submit_latency.count() == 0) return std::numeric_limits<double>::quiet_NaN();
  return to_seconds(f.metrics.submit_latency.quantile(q / 100.0));
}

double detail::async_seconds(const Figures& f) {
  RELAYSIM_ASSERT(f.end >= f.start, "a run ends no earlier than it is measured from");
  double s = 0;
  for (const AsyncPeriod& p : f.metrics.periods) {
    const Time from = std::max(p.entered, f.start);
    const Time to = std::min(p.left, f.end);
    if (to > from) s += to_seconds(to - from);
  }
  return s;
}

}  // namespace relaysim::sim::sms
