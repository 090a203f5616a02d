#include "sim/webhook/metrics.h"

#include <algorithm>

#include "model/core/assert.h"

namespace relaysim::sim::webhook {

using namespace relaysim::webhook;

void Metrics::on(const Ingested& e) {
  if (e.result.outcome == CreateOutcome::created) ++acked;
}

void Metrics::on(const AttemptStarted& e) {
  ++attempts;
  if (e.number > 1) {
    ++retries;
  } else if (e.row.replays == 0) {
    first_wait.add(e.at - e.row.created_at);
  }
}

void Metrics::on(const ClientCreated& e) { ++created_by_outcome[static_cast<std::size_t>(e.result.status)]; }

void Metrics::on(const Completed& e) {
  if (!e.applied) return;
  const Completion& c = e.completion;
  if (c.status == Status::blocked) ++deferrals;
  if (!is_terminal(c.status)) return;
  ++terminal[static_cast<std::size_t>(c.status)][static_cast<std::size_t>(c.reason)];
  const std::uint32_t n = e.row.attempts + (c.attempt != nullptr ? 1 : 0);
  ++terminal_requests;
  terminal_attempts += n;
  max_attempts = std::max(max_attempts, n);
  ++attempts_per_request[std::min<std::size_t>(n, kAttemptBuckets - 1)];
  last_terminal_at = std::max(last_terminal_at, c.at);
  // A replayed request's time to delivery is the operator's, not the platform's.
  if (c.status == Status::delivered && e.row.replays == 0) delivery_latency.add(c.at - e.row.created_at);
}

void Metrics::on(const BreakerChanged& e) {
  if (breaker_.size() <= e.pod) breaker_.resize(e.pod + 1, BreakerState::closed);
  breaker_[e.pod] = e.to;
  if (e.to == BreakerState::open && e.from == BreakerState::closed) ++breaker_opened;
  if (e.to == BreakerState::closed) ++breaker_closed;
  if (transitions.size() < kTransitionsKept) {
    transitions.push_back({e.at, e.pod, e.from, e.to});
  } else {
    ++transitions_dropped;
  }
}

void Metrics::on(const ServiceBCalled& e) {
  ++serviceb_calls;
  const BreakerState s = e.pod < breaker_.size() ? breaker_[e.pod] : BreakerState::closed;
  if (s == BreakerState::half_open) ++serviceb_probes;
  if (!e.in_outage) return;
  ++serviceb_calls_in_outage;
  ++serviceb_calls_in_outage_by_state[static_cast<std::size_t>(s)];
}

void Metrics::on(const ProcessCrashed& e) {
  ++crashes;
  if (e.pod < breaker_.size()) breaker_[e.pod] = BreakerState::closed;  // a restarted pod starts closed
}

double detail::latency_quantile_s(const Figures& f, double q) {
  RELAYSIM_ASSERT(q > 0 && q <= 100, "a percentile is in (0, 100]");
  return if_delivered(f, to_seconds(f.metrics.delivery_latency.quantile(q / 100.0)));
}

double detail::wait_quantile_s(const Figures& f, double q) {
  RELAYSIM_ASSERT(q > 0 && q <= 100, "a percentile is in (0, 100]");
  return if_attempted(f, to_seconds(f.metrics.first_wait.quantile(q / 100.0)));
}

}  // namespace relaysim::sim::webhook
