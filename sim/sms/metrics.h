// The SMS gateway's metrics: a sink that counts what a run did (Metrics), what a run leaves behind
// (Figures), and the one table of every metric — name, unit, meaning and how it is computed —
// that `expect:`, `relaysim metrics`, the JSON, the summary and the docs are all served from.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/assert.h"
#include "model/sms/events.h"
#include "model/sms/store.h"
#include "sim/report/histogram.h"
#include "sim/report/metric.h"
#include "sim/report/violation_metrics.h"
#include "sim/report/series.h"
#include "sim/sms/invariants.h"
#include "sim/sms/oracle.h"
#include "sim/sms/truth.h"
#include "sim/world/process.h"

namespace relaysim::sim::sms {

namespace model = relaysim::sms;

// One period of a pod in async mode.
struct AsyncPeriod {
  std::uint32_t pod = 0;
  Time entered{};
  Time left = kTimeNever;  // kTimeNever: still async at the end
  model::AsyncRule entered_by = model::AsyncRule::none;
  model::AsyncRule left_by = model::AsyncRule::none;  // none: its pod crashed
};

class Metrics final : public SinkFor<model::Answered>,
                      public SinkFor<model::Accepted>,
                      public SinkFor<model::Claimed>,
                      public SinkFor<model::LimitDecided>,
                      public SinkFor<model::SubmitStarted>,
                      public SinkFor<model::SubmitFinished>,
                      public SinkFor<model::Completed>,
                      public SinkFor<model::ModeChanged>,
                      public SinkFor<model::RetryAlert>,
                      public SinkFor<model::ReceiptReceived>,
                      public SinkFor<model::StoreFailed>,
                      public SinkFor<model::CampaignAnswered>,
                      public SinkFor<model::CampaignExpanded>,
                      public SinkFor<model::MarketingDeferred>,
                      public SinkFor<OptedOut>,
                      public SinkFor<AdminActed>,
                      public SinkFor<AdminQueried>,
                      public SinkFor<ClientCalled>,
                      public SinkFor<ClientTimedOut>,
                      public SinkFor<ClientRejected>,
                      public SinkFor<ProviderSubmitted>,
                      public SinkFor<ProcessCrashed> {
 public:
  static constexpr std::size_t kPeriodsKept = 10'000;

  // The warm-up ends: count from zero, keeping what the run's pods and campaigns are in (the
  // async periods, the campaigns' states).
  void restart() {
    Metrics next;
    next.periods = std::move(periods);
    next.periods_dropped = periods_dropped;
    next.campaign_states = std::move(campaign_states);
    next.campaign_stops = std::move(campaign_stops);
    *this = std::move(next);
  }

  void on(const model::Answered& e) override;
  void on(const model::Accepted& e) override;
  void on(const model::Claimed& e) override { ++claims_by_prior[static_cast<std::size_t>(e.prior)]; }
  void on(const model::LimitDecided& e) override;
  void on(const model::SubmitStarted& e) override { ++sends_by_path[static_cast<std::size_t>(e.path)]; }
  void on(const model::SubmitFinished& e) override;
  void on(const model::Completed& e) override;
  void on(const model::ModeChanged& e) override;
  void on(const model::RetryAlert&) override { ++retry_alerts; }
  void on(const model::ReceiptReceived& e) override;
  void on(const model::StoreFailed&) override { ++store_failures; }
  void on(const model::CampaignAnswered& e) override;
  void on(const model::CampaignExpanded& e) override;
  void on(const model::MarketingDeferred&) override { ++marketing_deferred; }
  void on(const OptedOut&) override { ++opt_outs; }
  void on(const AdminActed& e) override {
    RELAYSIM_ASSERT(e.action < admin_actions.size(), "an admin acts by approving or revoking");
    ++admin_actions[e.action][e.outcome == model::AdminOutcome::done ? 1 : 0];
  }
  void on(const AdminQueried&) override { ++admin_queries; }
  void on(const ClientCalled& e) override;
  void on(const ClientTimedOut&) override { ++client_timeouts; }
  void on(const ClientRejected&) override { ++rejected; }
  void on(const ProviderSubmitted& e) override { ++fates[static_cast<std::size_t>(e.fate)]; }
  void on(const ProcessCrashed& e) override;

  std::uint64_t calls = 0;           // sends and campaign requests
  std::uint64_t repeats = 0;  // calls that repeated an earlier request (retries, duplicates)
  std::uint64_t campaign_calls = 0;  // of the calls, campaign requests
  std::uint64_t rejected = 0;
  std::uint64_t client_timeouts = 0;
  std::array<std::uint64_t, model::kAuthFaultCount> auth{};      // answers by fault
  std::array<std::uint64_t, model::kAcceptOutcomeCount> outcomes{};  // answers by accept outcome (no fault)
  std::array<std::uint64_t, model::kAnswerNames.count> repeat_answers{};  // duplicates by the first request's outcome
  std::uint64_t unavailable = 0;  // answers: the store failed
  std::uint64_t accepted = 0;     // messages
  std::array<std::uint64_t, model::kKindCount> accepted_by_kind{};
  std::array<std::uint64_t, model::kStatusCount> claims_by_prior{};
  std::array<std::uint64_t, model::kSendPathNames.count> sends_by_path{};
  std::array<std::uint64_t, model::kSubmitClassCount> submits_by_class{};
  std::uint64_t failovers = 0;
  // By provider: submits it answered, and of them those sent on to another after its refusal.
  std::array<std::uint64_t, model::kMaxProviders> submits_by_provider{};
  std::array<std::uint64_t, model::kMaxProviders> failovers_by_provider{};
  std::uint64_t retry_alerts = 0;
  std::array<std::array<std::uint64_t, model::kReasonCount>, model::kStatusCount> final{};
  std::uint64_t finals = 0;
  Time last_final_at{};
  std::array<std::array<std::uint64_t, 2>, kLimitViaNames.count> limits{};  // LimitVia × admitted
  std::uint64_t receipts = 0;
  std::uint64_t receipts_late = 0;  // for a message already final
  std::uint64_t store_failures = 0;
  std::array<std::uint64_t, kFateCount> fates{};
  std::uint64_t crashes = 0;
  std::uint64_t async_entered = 0;
  std::uint64_t async_left = 0;
  std::array<std::uint64_t, model::kAsyncRuleNames.count> async_by_rule{};  // entries and exits
  std::vector<AsyncPeriod> periods;
  std::uint64_t periods_dropped = 0;
  LatencyHistogram submit_latency;  // due (accept, or send_at if later) to a provider's certain accept
  std::uint64_t campaigns = 0;          // campaign requests taken
  std::uint64_t campaigns_refused = 0;  // refused: token, filter, store, key
  std::uint64_t campaign_chunks = 0;
  std::uint64_t campaign_chosen = 0;    // users the filters chose
  std::uint64_t campaign_skipped = 0;   // of them, opted out when expanded
  std::vector<model::CampaignState> campaign_states;  // by campaign id - 1, as last expanded
  std::vector<model::AcceptOutcome> campaign_stops;   // by campaign id - 1: what stopped it
  std::uint64_t campaign_quiet = 0;     // messages scheduled past their recipient's quiet hours when made
  std::uint64_t marketing_deferred = 0;  // messages claimed in quiet hours and put back
  std::uint64_t opt_outs = 0;
  std::array<std::array<std::uint64_t, 2>, 2> admin_actions{};  // approve, revoke × refused, done
  std::uint64_t admin_queries = 0;

 private:
  void close_period(std::uint32_t pod, Time at, model::AsyncRule rule);
};

// Everything an SMS run leaves behind.
struct Figures {
  Metrics metrics;
  std::array<std::uint64_t, kDuplicateCauseCount> duplicates{};
  std::uint64_t sent = 0;  // provider accepts (ground truth)
  std::uint64_t lost = 0;
  std::uint64_t refunds = 0;
  std::uint64_t limit_checks = 0;  // limit decisions the oracle replayed
  std::array<std::uint64_t, kInvariantCount> violations{};
  std::uint64_t unresolved = 0;  // accepted, not final at the end
  struct Quota {
    std::string business;
    std::uint64_t quota = 0;
    std::uint64_t used = 0;  // in the period the run ended in
  };
  std::vector<Quota> quotas;
  Time start{};  // the end of the warm-up
  Time end{};
};

using Metric = MetricOf<Figures>;

namespace detail {
using namespace metric_math;
constexpr double final_of(const Figures& f, model::Status s) {
  double n = 0;
  for (auto v : f.metrics.final[static_cast<std::size_t>(s)]) n += d(v);
  return n;
}
constexpr double final_as(const Figures& f, model::Status s, model::Reason r) {
  return d(f.metrics.final[static_cast<std::size_t>(s)][static_cast<std::size_t>(r)]);
}
inline double campaigns_in(const Figures& f, model::CampaignState s) {
  return d(static_cast<std::uint64_t>(std::count(f.metrics.campaign_states.begin(), f.metrics.campaign_states.end(), s)));
}
constexpr double dups(const Figures& f, DuplicateCause c) { return d(f.duplicates[static_cast<std::size_t>(c)]); }
constexpr double limits(const Figures& f, LimitVia via, bool admitted) {
  return d(f.metrics.limits[static_cast<std::size_t>(via)][admitted ? 1 : 0]);
}
double latency_quantile_s(const Figures& f, double q);
double async_seconds(const Figures& f);
}  // namespace detail

inline constexpr Metric kOwnMetrics[] = {
    // clang-format off
    {{"requests", Unit::count, "requests the clients made: sends (repeats included) and campaign requests"}, [](const Figures& f, double) { return detail::d(f.metrics.calls); }},
    {{"repeated_requests", Unit::count, "requests that repeated an earlier one: retries after a timeout and deliberate duplicates"}, [](const Figures& f, double) { return detail::d(f.metrics.repeats); }},
    {{"rejected_requests", Unit::count, "requests no pod was up to take"}, [](const Figures& f, double) { return detail::d(f.metrics.rejected); }},
    {{"client_timeouts", Unit::count, "requests whose client gave up waiting for the answer"}, [](const Figures& f, double) { return detail::d(f.metrics.client_timeouts); }},
    {{"auth_refused", Unit::count, "requests refused for their token (forged, expired, outside its scope)"}, [](const Figures& f, double) { double s = 0; for (std::size_t i = 1; i < f.metrics.auth.size(); ++i) s += detail::d(f.metrics.auth[i]); return s; }},
    {{"accepted", Unit::count, "messages accepted (stored, quota charged)"}, [](const Figures& f, double) { return detail::d(f.metrics.accepted); }},
    {{"duplicate_requests", Unit::count, "requests answered as repeats of an accepted one"}, [](const Figures& f, double) { return detail::d(f.metrics.outcomes[static_cast<std::size_t>(model::AcceptOutcome::duplicate)]); }},
    {{"conflicts", Unit::count, "requests refused: a key already used for other content"}, [](const Figures& f, double) { return detail::d(f.metrics.outcomes[static_cast<std::size_t>(model::AcceptOutcome::conflict)]); }},
    {{"quota_refused", Unit::count, "requests refused: the business's quota would be exceeded"}, [](const Figures& f, double) { return detail::d(f.metrics.outcomes[static_cast<std::size_t>(model::AcceptOutcome::quota_exhausted)]); }},
    {{"delivered", Unit::count, "messages whose receipt said delivered"}, [](const Figures& f, double) { return detail::final_of(f, model::Status::delivered); }},
    {{"undelivered", Unit::count, "messages whose receipt said undelivered"}, [](const Figures& f, double) { return detail::final_of(f, model::Status::undelivered); }},
    {{"unconfirmed", Unit::count, "messages a provider took with no receipt in time"}, [](const Figures& f, double) { return detail::final_of(f, model::Status::unconfirmed); }},
    {{"failed", Unit::count, "messages that never certainly went out (refused, exhausted, expired, ambiguous)"}, [](const Figures& f, double) { return detail::final_of(f, model::Status::failed); }},
    {{"suppressed", Unit::count, "marketing messages not sent by rule"}, [](const Figures& f, double) { return detail::final_of(f, model::Status::suppressed); }},
    {{"suppressed_opted_out", Unit::count, "marketing messages suppressed: the recipient opted out after the campaign chose them"}, [](const Figures& f, double) { return detail::final_as(f, model::Status::suppressed, model::Reason::opted_out); }},
    {{"suppressed_quiet_hours", Unit::count, "marketing messages suppressed: the recipient's quiet hours lasted past their validity"}, [](const Figures& f, double) { return detail::final_as(f, model::Status::suppressed, model::Reason::quiet_hours); }},
    {{"suppressed_frequency_cap", Unit::count, "marketing messages suppressed: the recipient had as many as the frequency cap allows"}, [](const Figures& f, double) { return detail::final_as(f, model::Status::suppressed, model::Reason::frequency_cap); }},
    {{"campaigns", Unit::count, "campaign requests taken"}, [](const Figures& f, double) { return detail::d(f.metrics.campaigns); }},
    {{"campaigns_refused", Unit::count, "campaign requests refused (token, filter, key, store)"}, [](const Figures& f, double) { return detail::d(f.metrics.campaigns_refused); }},
    {{"campaigns_done", Unit::count, "campaigns expanded to the end of the directory"}, [](const Figures& f, double) { return detail::campaigns_in(f, model::CampaignState::done); }},
    {{"campaigns_stopped", Unit::count, "campaigns stopped by a chunk the store refused (quota, revoked, a key in use)"}, [](const Figures& f, double) { return detail::campaigns_in(f, model::CampaignState::stopped); }},
    {{"campaign_messages", Unit::count, "marketing messages accepted"}, [](const Figures& f, double) { return detail::d(f.metrics.accepted_by_kind[static_cast<std::size_t>(model::Kind::marketing)]); }},
    {{"campaign_chosen", Unit::count, "directory users the campaigns' filters chose"}, [](const Figures& f, double) { return detail::d(f.metrics.campaign_chosen); }},
    {{"campaign_skipped", Unit::count, "chosen users skipped because they had opted out when their chunk was expanded"}, [](const Figures& f, double) { return detail::d(f.metrics.campaign_skipped); }},
    {{"campaign_quiet", Unit::count, "marketing messages made in their recipient's quiet hours, so scheduled for their end"}, [](const Figures& f, double) { return detail::d(f.metrics.campaign_quiet); }},
    {{"marketing_deferred", Unit::count, "times a marketing message came due in its recipient's quiet hours and was put back to their end"}, [](const Figures& f, double) { return detail::d(f.metrics.marketing_deferred); }},
    {{"opt_outs", Unit::count, "users who opted out during the run"}, [](const Figures& f, double) { return detail::d(f.metrics.opt_outs); }},
    {{"resends", Unit::count, "resends of failed messages accepted (each charged as a new message)"}, [](const Figures& f, double) { return detail::d(f.metrics.accepted_by_kind[static_cast<std::size_t>(model::Kind::resend)]); }},
    {{"resends_refused", Unit::count, "resend requests refused: the message named is not the business's, or not failed"}, [](const Figures& f, double) { return detail::d(f.metrics.outcomes[static_cast<std::size_t>(model::AcceptOutcome::not_resendable)]); }},
    {{"revoked_refused", Unit::count, "requests refused because their token's grant was revoked"}, [](const Figures& f, double) { return detail::d(f.metrics.outcomes[static_cast<std::size_t>(model::AcceptOutcome::revoked)]); }},
    {{"grants_revoked", Unit::count, "grants the admin revoked"}, [](const Figures& f, double) { return detail::d(f.metrics.admin_actions[1][1]); }},
    {{"grants_approved", Unit::count, "approvals by admin events during the run (after an application or a revocation)"}, [](const Figures& f, double) { return detail::d(f.metrics.admin_actions[0][1]); }},
    {{"admin_queries", Unit::count, "back-office queries the admin made (their answers checked by the oracle)"}, [](const Figures& f, double) { return detail::d(f.metrics.admin_queries); }},
    {{"unresolved", Unit::count, "accepted messages not final when the run ended"}, [](const Figures& f, double) { return detail::d(f.unresolved); }},
    {{"lost", Unit::count, "accepted messages missing from the store"}, [](const Figures& f, double) { return detail::d(f.lost); }},
    {{"delivered_rate", Unit::ratio, "delivered / accepted"}, [](const Figures& f, double) { return detail::ratio(detail::final_of(f, model::Status::delivered), detail::d(f.metrics.accepted)); }},
    {{"sms_sent", Unit::count, "SMS the providers sent (ground truth, duplicates included)"}, [](const Figures& f, double) { return detail::d(f.sent); }},
    {{"duplicate_sms", Unit::count, "second and later sends of one message, all causes"}, [](const Figures& f, double) { double s = 0; for (auto v : f.duplicates) s += detail::d(v); return s; }},
    {{"duplicates_answer_lost", Unit::count, "duplicate SMS after an earlier send the gateway never heard of: its answer lost or late, or its pod crashed first"}, [](const Figures& f, double) { return detail::dups(f, DuplicateCause::answer_lost); }},
    {{"duplicates_rescued", Unit::count, "duplicate SMS after a claim was taken over (a crash, or a scan racing a slow send)"}, [](const Figures& f, double) { return detail::dups(f, DuplicateCause::rescued); }},
    {{"duplicates_store_failure", Unit::count, "duplicate SMS after the store failed to record an outcome"}, [](const Figures& f, double) { return detail::dups(f, DuplicateCause::store_failure); }},
    {{"duplicates_unexplained", Unit::count, "duplicate SMS nothing explains (always an S-dup violation)"}, [](const Figures& f, double) { return detail::dups(f, DuplicateCause::unexplained); }},
    {{"submits", Unit::count, "submits to providers"}, [](const Figures& f, double) { double s = 0; for (auto v : f.metrics.submits_by_class) s += detail::d(v); return s; }},
    {{"submits_ambiguous", Unit::count, "submits that timed out or were reset: the provider may have sent them"}, [](const Figures& f, double) { return detail::d(f.metrics.submits_by_class[static_cast<std::size_t>(model::SubmitClass::timeout)] + f.metrics.submits_by_class[static_cast<std::size_t>(model::SubmitClass::reset)]); }},
    {{"submits_throttled", Unit::count, "submits a provider answered 429"}, [](const Figures& f, double) { return detail::d(f.metrics.submits_by_class[static_cast<std::size_t>(model::SubmitClass::throttled)]); }},
    {{"failovers", Unit::count, "submits sent on to another provider after a certain refusal"}, [](const Figures& f, double) { return detail::d(f.metrics.failovers); }},
    {{"retry_alerts", Unit::count, "messages whose submits reached their business's alert threshold"}, [](const Figures& f, double) { return detail::d(f.metrics.retry_alerts); }},
    {{"rescans", Unit::count, "claims of messages not pending: unknown outcomes resent, expired leases taken over, overdue receipts ended"}, [](const Figures& f, double) { const auto& c = f.metrics.claims_by_prior; return detail::d(c[static_cast<std::size_t>(model::Status::in_flight)] + c[static_cast<std::size_t>(model::Status::unknown)] + c[static_cast<std::size_t>(model::Status::submitted)]); }},
    {{"refunds", Unit::count, "quota units given back (failed, and no provider certainly took it)"}, [](const Figures& f, double) { return detail::d(f.refunds); }},
    {{"limit_admitted", Unit::count, "limit decisions that admitted a submit, all ways"}, [](const Figures& f, double) { double s = 0; for (const auto& v : f.metrics.limits) s += detail::d(v[1]); return s; }},
    {{"limit_held", Unit::count, "submits a limit held back (stored for later: async)"}, [](const Figures& f, double) { double s = 0; for (const auto& v : f.metrics.limits) s += detail::d(v[0]); return s; }},
    {{"limit_checked", Unit::count, "limit decisions the oracle replayed against the algorithms' definitions (the store's, and each pod's local share)"}, [](const Figures& f, double) { return detail::d(f.limit_checks); }},
    {{"limit_local", Unit::count, "limit decisions made by a pod's local share while Redis was down"}, [](const Figures& f, double) { return detail::limits(f, LimitVia::local, true) + detail::limits(f, LimitVia::local, false); }},
    {{"limit_unchecked", Unit::count, "submits let through unlimited while Redis was down (when_down: allow)"}, [](const Figures& f, double) { return detail::limits(f, LimitVia::allow, true); }},
    {{"limit_denied_down", Unit::count, "submits held back because Redis was down (when_down: deny)"}, [](const Figures& f, double) { return detail::limits(f, LimitVia::deny, false); }},
    {{"async_entered", Unit::count, "times a pod entered async mode"}, [](const Figures& f, double) { return detail::d(f.metrics.async_entered); }},
    {{"async_left", Unit::count, "times a pod left async mode"}, [](const Figures& f, double) { return detail::d(f.metrics.async_left); }},
    {{"async_s", Unit::seconds, "pod-seconds spent in async mode (after the warm-up)"}, [](const Figures& f, double) { return detail::async_seconds(f); }},
    {{"sync_sends", Unit::count, "submits made in a client's request"}, [](const Figures& f, double) { return detail::d(f.metrics.sends_by_path[0]); }},
    {{"async_sends", Unit::count, "submits made by async workers"}, [](const Figures& f, double) { return detail::d(f.metrics.sends_by_path[1]); }},
    {{"probe_sends", Unit::count, "sync submits made in async mode as probes"}, [](const Figures& f, double) { return detail::d(f.metrics.sends_by_path[2]); }},
    {{"store_failures", Unit::count, "store calls that failed, all pods"}, [](const Figures& f, double) { return detail::d(f.metrics.store_failures); }},
    {{"latency_p50_s", Unit::seconds, "due (accept, or send_at if later) to a provider's certain accept, median"}, [](const Figures& f, double) { return detail::latency_quantile_s(f, 50); }},
    {{"latency_p99_s", Unit::seconds, "due (accept, or send_at if later) to a provider's certain accept, 99th percentile"}, [](const Figures& f, double) { return detail::latency_quantile_s(f, 99); }},
    {{"latency_mean_s", Unit::seconds, "due (accept, or send_at if later) to a provider's certain accept, mean (exact)"}, [](const Figures& f, double) { return f.metrics.submit_latency.mean_metric_s(); }},
    {{"latency_p{q}_s", Unit::seconds, "due (accept, or send_at if later) to a provider's certain accept, any percentile q in (0, 100]"}, [](const Figures& f, double q) { return detail::latency_quantile_s(f, q); }},
    {{"last_final_s", Unit::seconds, "when the last message became final"}, [](const Figures& f, double) { return to_seconds(f.metrics.last_final_at); }},
    {{"crashes", Unit::count, "pod crashes"}, [](const Figures& f, double) { return detail::d(f.metrics.crashes); }},
    // clang-format on
};
// Then `violations` and one row per invariant, derived from its table (sim/report/violation_metrics.h).
inline constexpr auto kMetrics = with_violation_metrics<kOwnMetrics, kInvariants>();


// A metric's index by name, checked when the program is compiled: metric("delivered_rate").
consteval std::size_t metric(std::string_view name) { return metric_index<kMetrics>(name); }

// The pipeline as `relaysim report` draws it.
inline constexpr Flow kPipeline[] = {
    flow<kMetrics>("businesses", "gateway", "accepted"),
    flow<kMetrics>("gateway", "suppressed", "suppressed"),
    flow<kMetrics>("gateway", "failed", "failed"),
    flow<kMetrics>("gateway", "providers", "submits"),
    flow<kMetrics>("providers", "delivered", "delivered"),
    flow<kMetrics>("providers", "undelivered", "undelivered"),
    flow<kMetrics>("providers", "unconfirmed", "unconfirmed"),
};

// What the time series sees of one window (sim/report/series.h).
using Sample = WindowSample<Figures, relaysim::sms::StoreCounts>;

using Series = SeriesOf<Sample, kMetrics>;

// The columns of the time series.
inline constexpr SeriesEntry<Sample> kSeries[] = {
    // clang-format off
    Series::windowed<metric("requests")>(Panel::flow),
    Series::windowed<metric("accepted")>(Panel::flow),
    Series::windowed<metric("quota_refused")>(Panel::flow),
    Series::windowed<metric("delivered")>(Panel::flow),
    Series::windowed<metric("undelivered")>(Panel::flow),
    Series::windowed<metric("unconfirmed")>(Panel::flow),
    Series::windowed<metric("failed")>(Panel::flow),
    Series::windowed<metric("suppressed")>(Panel::flow),
    Series::windowed<metric("submits")>(Panel::calls),
    Series::windowed<metric("submits_throttled")>(Panel::calls),
    Series::windowed<metric("submits_ambiguous")>(Panel::calls),
    Series::windowed<metric("failovers")>(Panel::calls),
    Series::windowed<metric("sync_sends")>(Panel::calls),
    Series::windowed<metric("async_sends")>(Panel::calls),
    Series::windowed<metric("latency_p50_s")>(Panel::latency),
    Series::windowed<metric("latency_p99_s")>(Panel::latency),
    Series::windowed<metric("latency_mean_s")>(Panel::latency),
    Series::in_status<model::Status::pending>("pending", "messages waiting for their due time, a retry or async sending, at the window's end"),
    Series::in_status<model::Status::in_flight>("in_flight", "messages claimed by a pod, at the window's end"),
    Series::in_status<model::Status::unknown>("unknown", "messages a provider may or may not have accepted, at the window's end"),
    Series::in_status<model::Status::submitted>("submitted", "messages a provider accepted, waiting for a receipt, at the window's end"),
    Series::windowed<metric("async_entered")>(Panel::health),
    Series::windowed<metric("store_failures")>(Panel::health),
    Series::windowed<metric("crashes")>(Panel::health),
    // clang-format on
};

// What a provider's columns see of one window: the figures counted in it, and how many pods had
// the provider ejected at its end.
struct ProviderSample {
  const Figures& window;
  model::ProviderId provider;
  std::uint32_t ejected_by;
};

// The columns of each provider, after its pending messages (SeriesColumns, sim/system.h):
// `submits[alpha]`. With them a provider that flaps — ejected, back, ejected — shows by itself.
inline constexpr SeriesEntry<ProviderSample> kProviderSeries[] = {
    // clang-format off
    {{"submits", Unit::count, "submits the provider answered (the `submits` metric, by provider)", Panel::groups, true}, [](const ProviderSample& s) { return detail::d(s.window.metrics.submits_by_provider[s.provider]); }},
    {{"failovers", Unit::count, "of its submits, those sent on to another provider after its certain refusal (the `failovers` metric, by provider)", Panel::groups, true}, [](const ProviderSample& s) { return detail::d(s.window.metrics.failovers_by_provider[s.provider]); }},
    {{"ejected", Unit::count, "pods that had the provider ejected (routing `error_rate`), at the window's end", Panel::groups}, [](const ProviderSample& s) { return detail::d(s.ejected_by); }},
    // clang-format on
};

}  // namespace relaysim::sim::sms
