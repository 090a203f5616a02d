// The webhook system's metrics: a sink that counts what a run did (Metrics), what a run leaves
// behind (Figures), and the one table of every metric — name, unit, meaning and how it is
// computed from the figures — that `expect:`, `relaysim metrics`, the JSON, the summary and the
// docs are all served from.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "model/webhook/events.h"
#include "model/webhook/metric_families.h"
#include "model/webhook/store.h"
#include "sim/report/histogram.h"
#include "sim/report/metric.h"
#include "sim/report/violation_metrics.h"
#include "sim/report/series.h"
#include "sim/webhook/invariants.h"
#include "sim/webhook/oracle.h"
#include "sim/webhook/truth.h"
#include "sim/world/process.h"

namespace relaysim::sim::webhook {

namespace model = relaysim::webhook;

struct BreakerTransition {
  Time at{};
  std::uint32_t pod = 0;
  BreakerState from{};
  BreakerState to{};
};

class Metrics final : public SinkFor<model::Ingested>,
                      public SinkFor<model::AttemptStarted>,
                      public SinkFor<model::Completed>,
                      public SinkFor<model::TenantNotified>,
                      public SinkFor<model::UrlLookedUp>,
                      public SinkFor<model::BreakerChanged>,
                      public SinkFor<model::StoreFailed>,
                      public SinkFor<model::Replayed>,
                      public SinkFor<ClientCreated>,
                      public SinkFor<ClientRejected>,
                      public SinkFor<ServiceBCalled>,
                      public SinkFor<ProcessCrashed> {
 public:
  // Transitions beyond this many are counted, not kept (a breaker flapping for days would
  // otherwise fill memory); the summary and the JSON say how many were dropped.
  static constexpr std::size_t kTransitionsKept = 10'000;
  static constexpr std::size_t kAttemptBuckets = 12;  // histogram of attempts per request: 0..10, 11+

  explicit Metrics(std::uint32_t pods) : breaker_(pods, BreakerState::closed) {}

  // Starts counting a new window of the time series from zero; what the pods' breakers are in
  // carries over.
  void new_window() {
    Metrics next(0);
    next.breaker_ = std::move(breaker_);
    *this = std::move(next);
  }

  // The warm-up ends: count from zero, as new_window() does, but keep the breaker transitions the
  // run's timeline shows.
  void restart() {
    std::vector<BreakerTransition> kept = std::move(transitions);
    const std::uint64_t dropped = transitions_dropped;
    new_window();
    transitions = std::move(kept);
    transitions_dropped = dropped;
  }

  void on(const model::Ingested& e) override;
  void on(const model::AttemptStarted& e) override;
  void on(const model::Completed& e) override;
  void on(const model::TenantNotified&) override { ++notifications; }
  void on(const model::UrlLookedUp& e) override { ++(e.cache_hit ? cache_hits : cache_misses); }
  void on(const model::BreakerChanged& e) override;
  void on(const model::StoreFailed&) override { ++store_failures; }
  void on(const model::Replayed& e) override { ++replays[static_cast<int>(e.outcome)]; }
  void on(const ClientCreated& e) override;
  void on(const ClientRejected&) override { ++rejected; }
  void on(const ServiceBCalled& e) override;
  void on(const ProcessCrashed& e) override;

  std::array<std::uint64_t, model::kIngestStatusNames.count> created_by_outcome{};
  std::uint64_t store_failures = 0;
  std::uint64_t rejected = 0;
  std::uint64_t acked = 0;
  std::uint64_t attempts = 0;
  std::uint64_t retries = 0;  // attempts after a request's first
  std::uint64_t deferrals = 0;
  std::uint64_t notifications = 0;
  std::array<std::uint64_t, model::kReplayOutcomeNames.count> replays{};
  std::uint64_t cache_hits = 0;
  std::uint64_t cache_misses = 0;
  std::uint64_t crashes = 0;
  std::array<std::array<std::uint64_t, model::kReasonCount>, model::kStatusCount> terminal{};
  std::uint64_t terminal_requests = 0;
  std::uint64_t terminal_attempts = 0;  // attempts made by the terminal requests, exactly
  std::uint32_t max_attempts = 0;       // the most any terminal request made
  std::array<std::uint64_t, kAttemptBuckets> attempts_per_request{};
  Time last_terminal_at{};  // when the last request became terminal
  LatencyHistogram delivery_latency;
  // Ingest to the first attempt's start: the time a request waited for a slot (and its URL)
  // before its endpoint was first called; the queue's wait, apart from the endpoint's service.
  LatencyHistogram first_wait;
  std::uint64_t serviceb_calls = 0;
  std::uint64_t serviceb_probes = 0;  // calls made as a half-open breaker's probe
  std::uint64_t serviceb_calls_in_outage = 0;
  std::array<std::uint64_t, kBreakerStateNames.count> serviceb_calls_in_outage_by_state{};
  std::uint64_t breaker_opened = 0;
  std::uint64_t breaker_closed = 0;
  std::vector<BreakerTransition> transitions;
  std::uint64_t transitions_dropped = 0;

 private:
  std::vector<BreakerState> breaker_;  // per pod, as last reported
};

// What the oracle found beyond violations: duplicates and their causes, rescues, fencing.
struct OracleFigures {
  std::array<std::uint64_t, kDuplicateCauseCount> duplicates{};
  std::uint64_t rescued = 0;
  std::uint64_t stale = 0;
  std::uint64_t stale_applied = 0;
  std::uint64_t retry_after_honoured = 0;
  std::uint64_t lost = 0;
};

// Everything a webhook run leaves behind.
struct Figures {
  Metrics metrics{0};
  OracleFigures oracle;
  std::array<std::uint64_t, kInvariantCount> violations{};
  std::uint64_t unresolved = 0;  // acknowledged, not terminal at the end
  std::uint64_t stuck = 0;       // of those, to endpoint groups down for good
  double oldest_open_age_s = std::numeric_limits<double>::quiet_NaN();  // at the end, the rest's oldest
  double busy_s = 0;  // dispatch-slot seconds spent on calls, every pod, after the warm-up
  double slot_s = 0;  // dispatch-slot seconds there were: every pod's slots from the warm-up's end
  Time end{};
};

// One metric: what the generic spine sees, and how it is computed.
using Metric = MetricOf<Figures>;

namespace detail {
using namespace metric_math;
constexpr double sum(const std::array<std::uint64_t, model::kReasonCount>& row) {
  double s = 0;
  for (auto v : row) s += d(v);
  return s;
}
constexpr double terminal(const Figures& f, model::Status s) { return sum(f.metrics.terminal[static_cast<int>(s)]); }
constexpr double terminal(const Figures& f, model::Status s, model::Reason r) {
  return d(f.metrics.terminal[static_cast<int>(s)][static_cast<int>(r)]);
}
constexpr double duplicates(const Figures& f, int cause) { return d(f.oracle.duplicates[static_cast<std::size_t>(cause)]); }
double latency_quantile_s(const Figures& f, double q);
double wait_quantile_s(const Figures& f, double q);
// A latency figure, or n/a when nothing was delivered: 0s would pass "< 1s" by accident.
inline double if_delivered(const Figures& f, double v) {
  return f.metrics.delivery_latency.count() == 0 ? std::numeric_limits<double>::quiet_NaN() : v;
}
// A wait figure, or n/a when no request was attempted.
inline double if_attempted(const Figures& f, double v) {
  return f.metrics.first_wait.count() == 0 ? std::numeric_limits<double>::quiet_NaN() : v;
}
}  // namespace detail

inline constexpr Metric kOwnMetrics[] = {
    // clang-format off
    {{"ingested", Unit::count, "requests acknowledged (created) by the platform"}, [](const Figures& f, double) { return detail::d(f.metrics.acked); }},
    {{"delivered", Unit::count, "requests delivered (2xx)"}, [](const Figures& f, double) { return detail::terminal(f, model::Status::delivered); }},
    {{"failed", Unit::count, "requests failed terminally (4xx, 410, no_url, ...)"}, [](const Figures& f, double) { return detail::terminal(f, model::Status::failed); }},
    {{"dead_lettered", Unit::count, "requests dead-lettered"}, [](const Figures& f, double) { return detail::terminal(f, model::Status::dead_lettered); }},
    {{"dead_lettered_deadline", Unit::count, "requests dead-lettered because their deadline passed"}, [](const Figures& f, double) { return detail::terminal(f, model::Status::dead_lettered, model::Reason::deadline); }},
    {{"failed_no_url", Unit::count, "requests failed because ServiceB does not know their cxid"}, [](const Figures& f, double) { return detail::terminal(f, model::Status::failed, model::Reason::no_url); }},
    {{"unresolved", Unit::count, "acknowledged requests not terminal when the run ended"}, [](const Figures& f, double) { return detail::d(f.unresolved); }},
    {{"unresolved_down_for_good", Unit::count, "of the unresolved, those to endpoint groups down for good (`down` with no end): they wait for their deadline"}, [](const Figures& f, double) { return detail::d(f.stuck); }},
    {{"oldest_open_age_s", Unit::seconds, "how long the oldest unresolved request not to a group down for good had waited when the run ended (n/a: none)"}, [](const Figures& f, double) { return f.oldest_open_age_s; }},
    {{"lost", Unit::count, "acknowledged requests missing from the store"}, [](const Figures& f, double) { return detail::d(f.oracle.lost); }},
    {{"dlq_rate", Unit::ratio, "dead_lettered / ingested"}, [](const Figures& f, double) { return detail::ratio(detail::terminal(f, model::Status::dead_lettered), detail::d(f.metrics.acked)); }},
    {{"delivered_rate", Unit::ratio, "delivered / ingested"}, [](const Figures& f, double) { return detail::ratio(detail::terminal(f, model::Status::delivered), detail::d(f.metrics.acked)); }},
    {{"endpoint_duplicates", Unit::count, "receipts of an already-accepted request at its endpoint, all causes"}, [](const Figures& f, double) { double s = 0; for (auto v : f.oracle.duplicates) s += detail::d(v); return s; }},
    {{"duplicates_lost_response", Unit::count, "endpoint duplicates caused by a lost response"}, [](const Figures& f, double) { return detail::duplicates(f, 0); }},
    {{"duplicates_late_response", Unit::count, "endpoint duplicates caused by a response that came after the HTTP timeout"}, [](const Figures& f, double) { return detail::duplicates(f, 1); }},
    {{"duplicates_crash", Unit::count, "endpoint duplicates caused by a pod crashing mid-attempt"}, [](const Figures& f, double) { return detail::duplicates(f, 2); }},
    {{"duplicates_lease_expired", Unit::count, "endpoint duplicates caused by an expired lease (its pod paused past it, or its completion fenced off)"}, [](const Figures& f, double) { return detail::duplicates(f, 3); }},
    {{"duplicates_store_failure", Unit::count, "endpoint duplicates caused by a completion the store failed to record"}, [](const Figures& f, double) { return detail::duplicates(f, 4); }},
    {{"duplicates_unexplained", Unit::count, "endpoint duplicates with no ambiguous outcome to explain them"}, [](const Figures& f, double) { return detail::duplicates(f, 5); }},
    {{"attempts", Unit::count, "HTTP attempts started"}, [](const Figures& f, double) { return detail::d(f.metrics.attempts); }},
    {{"retries", Unit::count, "HTTP attempts after a request's first"}, [](const Figures& f, double) { return detail::d(f.metrics.retries); }},
    {{"attempts_per_request", Unit::number, "mean attempts per terminal request (exact; a replayed request counts each time it ends, with all its attempts)"}, [](const Figures& f, double) { return detail::ratio(detail::d(f.metrics.terminal_attempts), detail::d(f.metrics.terminal_requests)); }},
    {{"attempts_max", Unit::count, "the most attempts any terminal request made"}, [](const Figures& f, double) { return detail::d(f.metrics.max_attempts); }},
    {{"deferrals", Unit::count, "times a request was deferred as blocked_on_dependency"}, [](const Figures& f, double) { return detail::d(f.metrics.deferrals); }},
    {{"rescued", Unit::count, "claims taken over after the previous claimant's lease expired"}, [](const Figures& f, double) { return detail::d(f.oracle.rescued); }},
    {{"stale_completions", Unit::count, "completions refused because their claim token was stale"}, [](const Figures& f, double) { return detail::d(f.oracle.stale); }},
    {{"stale_completions_applied", Unit::count, "completions applied though their claim token was stale (always a W-nodup violation)"}, [](const Figures& f, double) { return detail::d(f.oracle.stale_applied); }},
    {{"retry_after_honoured", Unit::count, "retries that waited out a Retry-After longer than the backoff's minimum"}, [](const Figures& f, double) { return detail::d(f.oracle.retry_after_honoured); }},
    {{"notifications", Unit::count, "tenant notifications (failed or dead-lettered)"}, [](const Figures& f, double) { return detail::d(f.metrics.notifications); }},
    {{"replayed", Unit::count, "manual replays that put a terminal request back to pending (it counts again in the terminal figures as it ends again, and not in the latency figures)"}, [](const Figures& f, double) { return detail::d(f.metrics.replays[static_cast<int>(model::ReplayOutcome::replayed)]); }},
    {{"replays_refused", Unit::count, "manual replays refused: the request was not terminal, or no longer stored"}, [](const Figures& f, double) { return detail::d(f.metrics.replays[static_cast<int>(model::ReplayOutcome::not_terminal)] + f.metrics.replays[static_cast<int>(model::ReplayOutcome::not_found)]); }},
    {{"duplicate_ingests", Unit::count, "create calls answered with the original request"}, [](const Figures& f, double) { return detail::d(f.metrics.created_by_outcome[1]); }},
    {{"conflicts", Unit::count, "create calls refused: same key, another payload"}, [](const Figures& f, double) { return detail::d(f.metrics.created_by_outcome[2]); }},
    {{"rejected_ingests", Unit::count, "create calls no pod was up to take"}, [](const Figures& f, double) { return detail::d(f.metrics.rejected); }},
    {{"unavailable_ingests", Unit::count, "create calls refused because the store failed (not acknowledged)"}, [](const Figures& f, double) { return detail::d(f.metrics.created_by_outcome[4]); }},
    {{"store_failures", Unit::count, "store calls that failed (busy, full, I/O), all pods"}, [](const Figures& f, double) { return detail::d(f.metrics.store_failures); }},
    {{"serviceb_calls", Unit::count, "calls to ServiceB"}, [](const Figures& f, double) { return detail::d(f.metrics.serviceb_calls); }},
    {{"serviceb_probes", Unit::count, "calls to ServiceB made as a half-open breaker's probe"}, [](const Figures& f, double) { return detail::d(f.metrics.serviceb_probes); }},
    {{"serviceb_calls_in_outage", Unit::count, "calls to ServiceB during its outages"}, [](const Figures& f, double) { return detail::d(f.metrics.serviceb_calls_in_outage); }},
    {{"serviceb_calls_while_open", Unit::count, "calls to ServiceB while the caller's breaker was open (always 0)"}, [](const Figures& f, double) { return detail::d(f.metrics.serviceb_calls_in_outage_by_state[1]); }},
    {{"serviceb_probes_in_outage", Unit::count, "half-open probes sent to ServiceB during its outages"}, [](const Figures& f, double) { return detail::d(f.metrics.serviceb_calls_in_outage_by_state[2]); }},
    {{"breaker_opened", Unit::count, "breaker transitions closed -> open, all pods"}, [](const Figures& f, double) { return detail::d(f.metrics.breaker_opened); }},
    {{"breaker_closed", Unit::count, "breaker transitions to closed, all pods"}, [](const Figures& f, double) { return detail::d(f.metrics.breaker_closed); }},
    {{"cache_hit_ratio", Unit::ratio, "URL cache hits / lookups"}, [](const Figures& f, double) { return detail::ratio(detail::d(f.metrics.cache_hits), detail::d(f.metrics.cache_hits + f.metrics.cache_misses)); }},
    {{"latency_mean_s", Unit::seconds, "ingest-to-delivered latency, mean (exact)"}, [](const Figures& f, double) { return detail::if_delivered(f, f.metrics.delivery_latency.mean_seconds()); }},
    {{"latency_p50_s", Unit::seconds, "ingest-to-delivered latency, median"}, [](const Figures& f, double) { return detail::latency_quantile_s(f, 50); }},
    {{"latency_p99_s", Unit::seconds, "ingest-to-delivered latency, 99th percentile"}, [](const Figures& f, double) { return detail::latency_quantile_s(f, 99); }},
    {{"latency_max_s", Unit::seconds, "ingest-to-delivered latency, maximum (exact)"}, [](const Figures& f, double) { return detail::if_delivered(f, to_seconds(f.metrics.delivery_latency.max())); }},
    {{"latency_p{q}_s", Unit::seconds, "ingest-to-delivered latency, any percentile q in (0, 100]: latency_p90_s, latency_p99.9_s"}, [](const Figures& f, double q) { return detail::latency_quantile_s(f, q); }},
    {{"wait_mean_s", Unit::seconds, "ingest to a request's first attempt, mean (exact): the wait for a dispatch slot and the URL, apart from the endpoint's answer"}, [](const Figures& f, double) { return detail::if_attempted(f, f.metrics.first_wait.mean_seconds()); }},
    {{"wait_p99_s", Unit::seconds, "ingest to a request's first attempt, 99th percentile"}, [](const Figures& f, double) { return detail::wait_quantile_s(f, 99); }},
    {{"wait_p{q}_s", Unit::seconds, "ingest to a request's first attempt, any percentile q in (0, 100]: wait_p50_s, wait_p90_s"}, [](const Figures& f, double q) { return detail::wait_quantile_s(f, q); }},
    {{"utilisation", Unit::ratio, "busy dispatch slots over every pod's slots, averaged over the run (after the warm-up)"}, [](const Figures& f, double) { return metric_math::ratio(f.busy_s, f.slot_s); }},
    {{"last_terminal_s", Unit::seconds, "when the last request became terminal: the time the backlog drained, if unresolved is 0"}, [](const Figures& f, double) { return to_seconds(f.metrics.last_terminal_at); }},
    {{"crashes", Unit::count, "pod crashes"}, [](const Figures& f, double) { return detail::d(f.metrics.crashes); }},
    // clang-format on
};
// Then `violations` and one row per invariant, derived from its table (sim/report/violation_metrics.h).
inline constexpr auto kMetrics = with_violation_metrics<kOwnMetrics, kInvariants>();


// A metric's index by name, checked when the program is compiled: metric("dlq_rate").
consteval std::size_t metric(std::string_view name) { return metric_index<kMetrics>(name); }

// The pipeline as `relaysim report` draws it.
inline constexpr Flow kPipeline[] = {
    flow<kMetrics>("clients", "platform", "ingested"),
    flow<kMetrics>("platform", "ServiceB", "serviceb_calls"),
    flow<kMetrics>("platform", "endpoints", "attempts"),
    flow<kMetrics>("platform", "delivered", "delivered"),
    flow<kMetrics>("platform", "failed", "failed"),
    flow<kMetrics>("platform", "dead letters", "dead_lettered"),
    flow<kMetrics>("platform", "tenants", "notifications"),
};

// What the time series sees of one window (sim/report/series.h).
struct Sample {
  const Figures& window;                   // what was counted in the window alone
  double oldest_open_age_s = 0;            // at the window's end (NaN: none open), groups down for good left out
  relaysim::webhook::StoreCounts counts;   // the store at the window's end
  double seconds = 0;                      // the window's length
  double busy_seconds = 0;                 // dispatch slot-seconds busy in the window, every pod
  double slots = 0;                        // dispatch slots of every pod, up or not
  std::uint32_t pods_up = 0;               // at the window's end
  std::uint32_t breakers_open = 0;         // pods whose breaker is open at the window's end
};

using Series = SeriesOf<Sample, kMetrics>;

// The columns of the time series.
inline constexpr SeriesEntry<Sample> kSeries[] = {
    // clang-format off
    Series::windowed<metric("ingested")>(Panel::flow),
    Series::windowed_as<metric("delivered"), model::Status::delivered>(Panel::flow, model::kCompletionsFamily),
    Series::windowed_as<metric("failed"), model::Status::failed>(Panel::flow, model::kCompletionsFamily),
    Series::windowed_as<metric("dead_lettered"), model::Status::dead_lettered>(Panel::flow, model::kCompletionsFamily),
    Series::windowed<metric("attempts")>(Panel::calls),
    Series::windowed<metric("retries")>(Panel::calls),
    Series::windowed<metric("deferrals")>(Panel::calls),
    Series::windowed<metric("latency_mean_s")>(Panel::latency),
    Series::windowed<metric("latency_p50_s")>(Panel::latency),
    Series::windowed<metric("latency_p99_s")>(Panel::latency),
    Series::windowed<metric("latency_max_s")>(Panel::latency),
    Series::in_status_as<model::Status::pending>("pending", "requests waiting for their first attempt or a retry, at the window's end", model::kRequestsFamily),
    Series::in_status_as<model::Status::blocked>("blocked", "requests waiting for ServiceB (blocked_on_dependency), at the window's end", model::kRequestsFamily),
    Series::in_status_as<model::Status::in_flight>("in_flight", "requests claimed by a pod, at the window's end", model::kRequestsFamily),
    {{"oldest_open_age_s", Unit::seconds, "how long the oldest request acknowledged and not terminal has waited, at the window's end (empty: none open); endpoint groups down for good (`down` with no end) left out", Panel::latency}, [](const Sample& s) { return s.oldest_open_age_s; }},
    {{"utilisation", Unit::ratio, "busy dispatch slots over every pod's slots, averaged over the window", Panel::health}, [](const Sample& s) { return metric_math::ratio(s.busy_seconds, s.slots * s.seconds); }},
    Series::windowed<metric("serviceb_calls")>(Panel::calls),
    Series::windowed<metric("serviceb_probes")>(Panel::calls),
    Series::windowed<metric("cache_hit_ratio")>(Panel::health),
    {{"breakers_open", Unit::count, "pods whose ServiceB breaker is open, at the window's end", Panel::health}, [](const Sample& s) { return detail::d(s.breakers_open); }},
    {{"pods_up", Unit::count, "pods running, at the window's end", Panel::health}, [](const Sample& s) { return detail::d(s.pods_up); }},
    Series::windowed<metric("crashes")>(Panel::health),
    Series::windowed<metric("store_failures")>(Panel::health),
    Series::windowed<metric("rejected_ingests")>(Panel::flow),
    // clang-format on
};

}  // namespace relaysim::sim::webhook
