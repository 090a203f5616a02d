#include "sim/sms/system.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "model/core/assert.h"
#include "model/resilience/mutants.h"
#include "model/sms/memory_store.h"
#include "model/sms/mutants.h"
#include "model/sms/sqlite_store.h"
#include "sim/report/text.h"
#include "sim/report/open_work.h"
#include "sim/system_of.h"
#include "sim/timeline.h"
#include "sim/sms/oracle.h"
#include "sim/sms/report.h"
#include "sim/sms/spec.h"
#include "sim/sms/world.h"

namespace relaysim::sim::sms {

namespace {

using relaysim::sms::Store;

// What a run's figures are split by: the provider that last had a message.
constexpr std::string_view kGroupDimension = "provider";
std::vector<std::string> provider_names(const SmsSpec& spec) {
  std::vector<std::string> out;
  for (const ProviderSpec& p : spec.providers) out.push_back(p.name);
  return out;
}

// Every message's end: counted by the provider that last had it (for a receipt, the one that
// sent it), and recorded as an entity when it was not delivered — failed, undelivered,
// unconfirmed. (A suppressed marketing message ended as its rules said, and is not recorded.)
// The latency, as the SMS latency metrics measure it, is the accepting provider's.
// The messages open now are kept by the provider last tried too: moved when a claim that
// submitted ends (Completed), so none until the first claim's end, and within a claim that fails
// over, at the provider before.
class Finals final : public SinkFor<model::Accepted>, public SinkFor<model::Completed>, public SinkFor<model::ReceiptReceived> {
 public:
  Finals(RecordSink* sink, Store& store, const SmsSpec& spec)
      : sink_(sink), store_(store), spec_(spec), tally_(kGroupDimension, provider_names(spec)), open_(spec.providers.size()) {}
  void on(const model::Accepted& e) override {
    if (e.result.outcome != model::AcceptOutcome::accepted) return;
    for (std::size_t i = 0; i < e.request.messages.size(); ++i) open_.open(e.result.first + i, GroupTally::kNone);
  }
  void on(const model::Completed& e) override {
    if (!e.applied) return;
    const model::Status st = e.completion.status;
    if (e.completion.provider != model::kNoProvider) open_.move(e.row.id, group(e.completion.provider));
    if (st == model::Status::submitted) tally_.latency(group(e.completion.provider), e.completion.at - e.row.send_at);
    if (!model::is_final(st)) return;
    open_.close(e.row.id);
    // The provider last tried: under this claim if it tried one, else under an earlier one.
    const model::ProviderId last = e.completion.provider != model::kNoProvider ? e.completion.provider : e.row.provider;
    tally_.finished(group(last), to_string(st), st == model::Status::delivered);
    if (st == model::Status::delivered || st == model::Status::suppressed) return;
    put(e.row, last, st, e.completion.reason, e.completion.at);
  }
  void on(const model::ReceiptReceived& e) override {
    if (e.outcome != model::ReceiptOutcome::applied) return;
    open_.close(e.message);
    const model::Status st = e.delivered ? model::Status::delivered : model::Status::undelivered;
    tally_.finished(group(e.provider), to_string(st), e.delivered);
    if (e.delivered || sink_ == nullptr) return;
    if (const std::optional<model::MessageRow> row = store_.get(e.message)) {
      put(*row, e.provider, st, model::Reason::receipt, e.at);
    }
  }
  GroupTally take() { return std::move(tally_); }
  const GroupTally& tally() const { return tally_; }
  void restart() { tally_.restart(); }
  std::span<const std::uint64_t> open_by_group() const { return open_.by_group(); }

 private:
  std::size_t group(model::ProviderId provider) const {
    return provider < spec_.providers.size() ? provider : GroupTally::kNone;
  }
  // `provider`: the one that last had it (for a receipt, the one that sent it).
  void put(const model::MessageRow& row, model::ProviderId provider, model::Status st, model::Reason reason, Time at) {
    if (sink_ == nullptr) return;
    RELAYSIM_ASSERT(row.business >= 1, "business ids count from 1");
    record_.key.assign(spec_.businesses.at(row.business - 1).name).append("/").append(row.biz_type).append("/").append(row.biz_id);
    record_.outcome = to_string(st);
    record_.reason = to_string(reason);
    record_.attempts = row.attempts;
    record_.created = row.created_at;
    record_.ended = at;
    record_.group = tally_.name(group(provider));
    sink_->record(record_);
  }

  RecordSink* sink_;  // nullptr: no records wanted
  Store& store_;
  const SmsSpec& spec_;
  GroupTally tally_;
  OpenWork open_;
  EntityRecord record_;  // reused: its key's buffer is allocated once
};

// One SMS run: the store, the buses, the world, and the sinks attached to the buses.
class Simulation final : public sim::Simulation {
 public:
  explicit Simulation(RunContext& ctx)
      : ctx_(ctx),
        store_(make_store(ctx)),
        fp_model_(ctx.fingerprint),
        fp_world_(ctx.fingerprint),
        fp_processes_(ctx.fingerprint),
        fp_kv_(ctx.fingerprint),
        oracle_(spec_of(ctx.scenario), ctx.scenario.seed, ctx.ledger) {
    buses_.model.attach(fp_model_);
    buses_.world.attach(fp_world_);
    buses_.processes.attach(fp_processes_);
    oracle_.attach(buses_.model, buses_.world, buses_.processes);
    buses_.model.attach(metrics_);
    buses_.world.attach(metrics_);
    buses_.processes.attach(metrics_);
    auto* sqlite = dynamic_cast<relaysim::sms::SqliteStore*>(store_.get());
    world_ = std::make_unique<World>(ctx.scenario, ctx.kernel, *store_, sqlite != nullptr ? &sqlite->db() : nullptr, buses_);
    world_->kv().bus().attach(fp_kv_);
    oracle_.attach(world_->kv().bus());
    if (ctx.series) {
      buses_.model.attach(window_.metrics);
      buses_.world.attach(window_.metrics);
      buses_.processes.attach(window_.metrics);
    }
    finals_.emplace(ctx.records, *store_, spec_of(ctx.scenario));
    buses_.model.attach(*finals_);
  }

  void sample(const SeriesWindow& w, std::span<double> row, std::span<double> groups) override {
    fill_row<kSeries>(Sample{window_, store_->counts()}, row);
    // Each provider's columns, provider after provider, when the run has them.
    constexpr std::size_t kEach = std::size(kProviderSeries);
    RELAYSIM_ASSERT(groups.empty() || groups.size() == kEach * spec_of(ctx_.scenario).providers.size(), "each provider's columns");
    for (std::size_t p = 0; p < groups.size() / kEach; ++p) {
      const auto provider = static_cast<model::ProviderId>(p);
      fill_row<kProviderSeries>(ProviderSample{window_, provider, world_->ejected_by(provider, w.end)}, groups.subspan(p * kEach, kEach));
    }
    window_.metrics = Metrics{};
  }

  std::uint64_t open_work() override { return unresolved(store_->counts()); }
  WorkCount work() override { return {metrics_.accepted, metrics_.finals}; }
  std::span<const std::uint64_t> open_by_group() const override { return finals_->open_by_group(); }

  GroupTally take_groups() override { return finals_->take(); }
  const LatencyHistogram& latency_so_far() const override { return finals_->tally().all().latency; }

  void restart_measuring(Time at) override {
    metrics_.restart();
    finals_->restart();
    measured_from_ = at;
  }

  std::unique_ptr<SystemReport> finish(Time end, bool judged, std::uint64_t open) override {
    RELAYSIM_ASSERT(end >= measured_from_, "a run ends no earlier than its warm-up");
    Figures f;
    if (judged) {
      oracle_.finish(end, *store_);
      f.unresolved = unresolved(store_->counts());
      const SmsSpec& spec = spec_of(ctx_.scenario);
      const std::uint32_t period = relaysim::sms::quota_period(end, spec.platform.quota_period);
      for (std::uint32_t i = 0; i < spec.businesses.size(); ++i) {
        f.quotas.push_back({spec.businesses[i].name, spec.businesses[i].quota, store_->quota_used(World::business_id(i), period)});
      }
    } else {
      f.unresolved = open;
    }
    for (std::size_t i = 0; i < kInvariantCount; ++i) f.violations[i] = ctx_.ledger.count(i);
    for (int c = 0; c < kDuplicateCauseCount; ++c) f.duplicates[static_cast<std::size_t>(c)] = oracle_.duplicates(static_cast<DuplicateCause>(c));
    f.sent = oracle_.sent();
    f.lost = oracle_.lost();
    f.refunds = oracle_.refunds();
    f.limit_checks = oracle_.limit_checks();
    f.start = measured_from_;
    f.end = end;
    f.metrics = std::move(metrics_);
    std::vector<TimelineEvent> timeline;
    const SmsSpec& sms = spec_of(ctx_.scenario);
    add_to_timeline(sms.redis.outages, "redis", timeline);
    for (const Window& w : sms.redis.restarts) timeline.push_back({w.at, w.length, "restart", "redis", "down, then back with no data", true});
    for (const ProviderSpec& p : sms.providers) {
      add_to_timeline(p.outages, "provider " + p.name, timeline);
      add_to_timeline(p.slowdowns, "provider " + p.name, timeline);
    }
    for (const AsyncPeriod& p : f.metrics.periods) {
      RELAYSIM_ASSERT(p.pod >= 1 && p.left >= p.entered, "an async period of a gateway pod ends after it begins");
      timeline.push_back({p.entered, p.left == kTimeNever ? kForever : p.left - p.entered, "async", "pod-" + std::to_string(p.pod - 1),
                          "by " + std::string(to_string(p.entered_by))});
    }
    return std::make_unique<Report>(std::move(f), std::move(timeline));
  }

 private:
  static std::unique_ptr<Store> make_store(const RunContext& ctx) {
    if (ctx.scenario.store == StoreKind::sqlite) {
      return std::make_unique<relaysim::sms::SqliteStore>(ctx.sqlite_path, Durability::off);
    }
    return std::make_unique<relaysim::sms::MemoryStore>();
  }
  static std::uint64_t unresolved(const relaysim::sms::StoreCounts& c) {
    std::uint64_t n = 0;
    for (int st = 0; st < static_cast<int>(relaysim::sms::kFirstFinal); ++st) n += c.by_status[st];
    return n;
  }

  RunContext& ctx_;
  std::unique_ptr<Store> store_;
  SmsBuses buses_;
  FingerprintSink<relaysim::sms::Events> fp_model_;
  FingerprintSink<WorldEvents> fp_world_;
  FingerprintSink<ProcessEvents> fp_processes_;
  FingerprintSink<KvBus> fp_kv_;
  Oracle oracle_;
  Metrics metrics_;
  Figures window_;  // what the current window of the time series counted
  Time measured_from_{};  // the end of the warm-up
  std::optional<Finals> finals_;
  std::unique_ptr<World> world_;
};

// The SMS gateway's planted bugs and those of the shared components it relies on.
constexpr const Mutant* kMutants[] = {
    &relaysim::sms::mutant::token_scope_unchecked,
    &relaysim::sms::mutant::token_expiry_unchecked,
    &relaysim::sms::mutant::token_expiry_off_by_one,
    &relaysim::sms::mutant::dedup_on_biz_id_alone,
    &relaysim::sms::mutant::quota_charged_per_attempt,
    &relaysim::sms::mutant::compensation_skips_status,
    &relaysim::sms::mutant::failover_after_ambiguous_timeout,
    &relaysim::sms::mutant::async_never_exits,
    &relaysim::sms::mutant::scheduled_sent_early,
    &relaysim::sms::mutant::retry_counter_shared,
    &relaysim::sms::mutant::opt_out_ignored,
    &relaysim::sms::mutant::quiet_hours_server_tz,
    &relaysim::sms::mutant::one_attempt_too_many,
    &relaysim::sms::mutant::quota_refuses_last_unit,
    &relaysim::sms::mutant::retry_waits_next_step,
    &relaysim::sms::mutant::in_memory_retry_early,
    &relaysim::sms::mutant::async_enters_one_late,
    &relaysim::sms::mutant::retry_before_failover,
    &relaysim::sms::mutant::quiet_hours_suppress,
    &relaysim::sms::mutant::cap_refuses_last_place,
    &relaysim::sms::mutant::cap_takes_one_more,
    &relaysim::sms::mutant::validity_from_acceptance,
    &relaysim::mutant::window_restarts_on_send,
    &relaysim::mutant::gcra_burst_off_by_one,
    &relaysim::mutant::limiter_share_undivided,
    &relaysim::mutant::limiter_check_then_set,
};

// Memory an accepted message costs, all parts together: the store's row and history, the
// oracle's record and dedup key, the metrics.
constexpr double kBytesPerMessage = 400;
constexpr double kBytesPerSqliteRow = 300;

// What the SMS gateway is (sim/system_of.h).
struct Manifest {
  using Spec = SmsSpec;
  using Simulation = sms::Simulation;
  static constexpr std::string_view kName = "sms";
  static constexpr std::string_view kTitle =
      "an SMS gateway with quotas, tokens, rate limits, provider failover and sync-to-async sending";
  static constexpr std::string_view kGroupDimension = sms::kGroupDimension;
  static const Schema<Spec>& schema() { return spec_schema(); }
  static constexpr const auto& kMetrics = sms::kMetrics;
  static constexpr const auto& kSeries = sms::kSeries;
  static constexpr const auto& kGroupSeries = sms::kProviderSeries;
  static constexpr const auto& kPipeline = sms::kPipeline;
  static constexpr const auto& kInvariants = sms::kInvariants;
  static constexpr const auto& kMutants = sms::kMutants;
  static std::vector<LifecycleDiagram> lifecycles() {
    return {diagram_of("sms-message", "An SMS message", relaysim::sms::kMessageLifecycle, [](auto s) { return to_string(s); })};
  }
};

// The messages one call of a segment brings to the workers: a bulk request's `size`; none for a
// campaign, whose messages its filter chooses from the directory as it runs (it is left out).
double messages_per_call(const LoadSegment& l) {
  switch (l.kind) {
    case relaysim::sms::Kind::bulk: return l.size;
    case relaysim::sms::Kind::marketing: return 0;
    default: return 1;
  }
}

// A rate limit as a station: `limit` places in a window, each held for the window by a call it
// admits, so that it carries limit / window calls a second whatever its algorithm.
queueing::StationLoad limit_station(std::string name, const relaysim::LimiterSpec& limit, const PeakLoad& peak) {
  queueing::Station st;
  st.lambda = peak.rate_per_s;
  st.ca2 = peak.scv;
  st.bursty = peak.bursty;
  st.mean_s = to_seconds(limit.window);
  st.cs2 = 0;
  st.c = limit.limit;
  return {std::move(name), "places in its " + write_duration(limit.window) + " window", st};
}

// The gateway's stations at the load's peak: its async workers, which carry every message once
// the switch has gone async (the worst case a pod must take: in sync mode single sends ride in
// their clients' requests instead), each held for a provider's answer, the providers taken alike;
// then its cluster limit and each business's own limit against the messages they would admit.
std::vector<queueing::StationLoad> sms_stations(const SmsSpec& spec) {
  std::vector<WeightedArrivals> all;
  for (const LoadSegment& l : spec.load) all.push_back({&l.arrivals, messages_per_call(l)});
  const PeakLoad peak = peak_load(all);
  if (peak.rate_per_s <= 0 || spec.providers.empty()) return {};
  LatencySpec service;
  service.shape = LatencyShape::mixture;
  for (const ProviderSpec& p : spec.providers) service.mixture.push_back(p.latency);
  const LatencyMoments m = moments(service);
  queueing::Station workers{peak.rate_per_s, m.mean_s, spec.platform.pods * spec.platform.concurrency_per_pod, peak.scv, m.scv, peak.bursty};
  std::vector<queueing::StationLoad> out{{"async workers", "worker slots", workers}};
  if (spec.platform.cluster_limit) out.push_back(limit_station("cluster limit", spec.platform.cluster_limit->spec, peak));
  for (std::size_t b = 0; b < spec.businesses.size(); ++b) {
    const BusinessSpec& business = spec.businesses[b];
    if (!business.policy.limit) continue;
    std::vector<WeightedArrivals> own;
    for (const LoadSegment& l : spec.load) {
      if (l.business_index == b) own.push_back({&l.arrivals, messages_per_call(l)});
    }
    const PeakLoad p = peak_load(own);
    if (p.rate_per_s > 0) out.push_back(limit_station(business.name + "'s limit", *business.policy.limit, p));
  }
  return out;
}

class SmsSystem final : public SystemOf<Manifest> {
 public:
  std::vector<std::string> groups(const Scenario& s) const override { return provider_names(spec_of(s)); }
  std::vector<queueing::StationLoad> stations(const Scenario& s) const override { return sms_stations(spec_of(s)); }
  Footprint footprint(const Scenario& s, bool database_in_memory) const override {
    const SmsSpec& spec = spec_of(s);
    Footprint f;
    double messages = 0;
    for (const LoadSegment& l : spec.load) {
      const double calls = l.arrivals.expected_calls(Time{} + s.duration);
      // A campaign request is answered at once and never repeated; other calls may be, after a timeout.
      f.calls += calls * (l.kind == relaysim::sms::Kind::marketing ? 1 : 1 + l.retries);
      // A campaign may make a message for every user of the directory (an upper bound: its filter
      // chooses fewer).
      const double per_call = l.kind == relaysim::sms::Kind::bulk        ? l.size
                              : l.kind == relaysim::sms::Kind::marketing ? static_cast<double>(spec.directory.users)
                                                                         : 1.0;
      messages += calls * per_call;
    }
    // (Each with its provider, for the backlog by provider: OpenWork.)
    f.parts.push_back({messages * (kBytesPerMessage + OpenWork::kBytesPerId), format_count(messages) + " messages kept",
                       "shorten the load, lower its rate, or make bulk requests smaller"});
    if (s.store == StoreKind::sqlite && database_in_memory) {
      f.parts.push_back({messages * kBytesPerSqliteRow, format_count(messages) + " messages in the in-memory SQLite database",
                         "give the run a database file (--sqlite-path), shorten the load, or lower its rate"});
    }
    return f;
  }
};

}  // namespace

const System& system() {
  static const SmsSystem instance;
  return instance;
}

}  // namespace relaysim::sim::sms
