#include "sim/webhook/system.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "model/core/assert.h"
#include "model/webhook/memory_store.h"
#include "model/webhook/mutants.h"
#include "model/webhook/sqlite_store.h"
#include "sim/report/open_work.h"
#include "sim/report/text.h"
#include "sim/system_of.h"
#include "sim/timeline.h"
#include "sim/webhook/oracle.h"
#include "sim/webhook/report.h"
#include "sim/webhook/world.h"

namespace relaysim::sim::webhook {

namespace {

using relaysim::webhook::Store;

// What a run's figures are split by: the endpoint group a request's URL points to.
constexpr std::string_view kGroupDimension = "endpoint group";
std::vector<std::string> group_names(const WebhookSpec& spec) {
  std::vector<std::string> out;
  for (const EndpointGroup& g : spec.endpoints) out.push_back(g.name);
  return out;
}

// The requests open now, by id (ids grow with time, so the least open id is the oldest), each in
// the endpoint group its URL points to (OpenWork): how many are open in each group, how many of
// them in a group down for good — `down` with no end, a dead customer endpoint whose requests can
// only wait for their deadline — and which of the others has waited longest. A cxid's endpoint,
// and so its group, is the world's for the whole run (a URL change moves it to a new URL of the
// same endpoint), so the group is looked up once, when the request is acknowledged.
class OpenRequests final : public SinkFor<relaysim::webhook::Ingested>,
                           public SinkFor<relaysim::webhook::Completed>,
                           public SinkFor<relaysim::webhook::Replayed> {
 public:
  explicit OpenRequests(const World& world) : world_(world), open_(world.spec().endpoints.size()) {
    for (const EndpointGroup& g : world.spec().endpoints) {
      dead_group_.push_back(std::any_of(g.down.begin(), g.down.end(), [](const Window& w) { return w.end() == kTimeNever; }));
    }
  }
  void on(const relaysim::webhook::Ingested& e) override {
    if (e.result.outcome != relaysim::webhook::CreateOutcome::created) return;
    open(e.result.id, group_of(e.request.cxid));
  }
  void on(const relaysim::webhook::Completed& e) override {
    if (!e.applied || !relaysim::webhook::is_terminal(e.completion.status)) return;
    const RequestId id = e.row.id;
    if (!open_.is_open(id)) return;
    if (dead(open_.group_of(id))) --stuck_;
    open_.close(id);
  }
  void on(const relaysim::webhook::Replayed& e) override {
    // A replay opens the request again in the group it was acknowledged in.
    if (e.outcome != relaysim::webhook::ReplayOutcome::replayed || open_.is_open(e.id)) return;
    open_.reopen(e.id);
    if (open_.is_open(e.id)) opened(e.id);
  }
  // The endpoint group of request `id` (GroupTally::kNone: ServiceB has no URL for its cxid), as
  // acknowledged; `cxid` is looked up only for a request never acknowledged.
  std::size_t group_of(RequestId id, std::string_view cxid) const { return open_.opened(id) ? open_.group_of(id) : group_of(cxid); }
  // Open now in groups down for good.
  std::uint64_t stuck() const { return stuck_; }
  // Open now in each endpoint group.
  std::span<const std::uint64_t> by_group() const { return open_.by_group(); }
  std::vector<bool> down_for_good() const { return dead_group_; }
  // Calls `f(id)` for every request open now, in the order they were acknowledged.
  template <class F>
  void each_open(F&& f) const {
    for (RequestId id = 0; id < open_.ids(); ++id) {
      if (open_.is_open(id)) f(id);
    }
  }
  // The oldest request open now outside those groups, if any.
  std::optional<RequestId> oldest() {
    while (oldest_ < open_.ids() && (!open_.is_open(oldest_) || dead(open_.group_of(oldest_)))) ++oldest_;
    return oldest_ < open_.ids() ? std::optional<RequestId>(oldest_) : std::nullopt;
  }

 private:
  std::size_t group_of(std::string_view cxid) const {
    const std::optional<std::uint32_t> g = world_.endpoint_group(cxid);
    return g ? *g : GroupTally::kNone;
  }
  bool dead(std::size_t group) const { return group != GroupTally::kNone && dead_group_[group]; }
  void open(RequestId id, std::size_t group) {
    if (open_.is_open(id)) return;  // only under a planted bug, which the oracle reports
    open_.open(id, group);
    opened(id);
  }
  void opened(RequestId id) {
    if (dead(open_.group_of(id))) ++stuck_;
    oldest_ = std::min<RequestId>(oldest_, id);  // a replay opens an old request again
  }

  const World& world_;
  std::vector<bool> dead_group_;  // per endpoint group: down for good
  OpenWork open_;
  std::uint64_t stuck_ = 0;
  RequestId oldest_ = 0;  // no request open outside the dead groups has a smaller id
};

// Every request's end: counted by the endpoint group its URL points to (as OpenRequests found it,
// which must see the completion after this does), and recorded as an entity when it was not
// delivered.
class Finals final : public SinkFor<relaysim::webhook::Completed> {
 public:
  Finals(const World& world, const OpenRequests& open, RecordSink* sink)
      : open_(open), sink_(sink), tally_(kGroupDimension, group_names(world.spec())) {}
  void on(const relaysim::webhook::Completed& e) override {
    using relaysim::webhook::Status;
    const Status st = e.completion.status;
    if (!e.applied || !relaysim::webhook::is_terminal(st)) return;
    const std::size_t group = open_.group_of(e.row.id, e.row.cxid);
    const bool delivered = st == Status::delivered;
    tally_.finished(group, to_string(st), delivered);
    // As the delivery-latency metrics measure it: a replayed request's time is the operator's.
    if (delivered && e.row.replays == 0) tally_.latency(group, e.completion.at - e.row.created_at);
    if (delivered || sink_ == nullptr) return;
    record_.key = e.row.cxid;
    record_.key += '/';
    record_.key += e.row.request_id;
    record_.outcome = to_string(st);
    record_.reason = to_string(e.completion.reason);
    record_.attempts = e.row.attempts + (e.completion.attempt != nullptr ? 1 : 0);
    record_.created = e.row.created_at;
    record_.ended = e.completion.at;
    record_.group = tally_.name(group);
    sink_->record(record_);
  }
  GroupTally take() { return std::move(tally_); }
  const GroupTally& tally() const { return tally_; }
  void restart() { tally_.restart(); }

 private:
  const OpenRequests& open_;
  RecordSink* sink_;  // nullptr: no records wanted
  GroupTally tally_;
  EntityRecord record_;  // reused: its key's buffer is allocated once
};

// One webhook run: the store, the buses, the world, and the sinks attached to the buses.
class Simulation final : public sim::Simulation {
 public:
  explicit Simulation(RunContext& ctx)
      : ctx_(ctx),
        store_(make_store(ctx)),
        fp_model_(ctx.fingerprint),
        fp_world_(ctx.fingerprint),
        fp_processes_(ctx.fingerprint),
        metrics_(spec_of(ctx.scenario).platform.pods) {
    auto* sqlite = dynamic_cast<relaysim::webhook::SqliteStore*>(store_.get());
    world_ = std::make_unique<World>(ctx.scenario, ctx.kernel, *store_, sqlite != nullptr ? &sqlite->db() : nullptr, buses_);
    requests_ = std::make_unique<RequestChecker>(ctx.scenario, world_->serviceb(), world_->store_faults(),
                                                 store_->retention(), ctx.ledger);
    breakers_ = std::make_unique<BreakerChecker>(ctx.scenario, world_->serviceb(), ctx.ledger);
    buses_.model.attach(fp_model_);
    buses_.world.attach(fp_world_);
    buses_.processes.attach(fp_processes_);
    buses_.model.attach(*requests_);
    buses_.world.attach(*requests_);
    buses_.processes.attach(*requests_);
    buses_.model.attach(*breakers_);
    buses_.world.attach(*breakers_);
    buses_.processes.attach(*breakers_);
    buses_.model.attach(metrics_);
    buses_.world.attach(metrics_);
    buses_.processes.attach(metrics_);
    if (ctx.series) {
      window_.metrics = Metrics(spec_of(ctx.scenario).platform.pods);
      buses_.model.attach(window_.metrics);
      buses_.world.attach(window_.metrics);
      buses_.processes.attach(window_.metrics);
    }
    open_.emplace(*world_);
    finals_.emplace(*world_, *open_, ctx.records);
    buses_.model.attach(*finals_);
    buses_.model.attach(*open_);
  }

  void sample(const SeriesWindow& w, std::span<double> row, std::span<double> groups) override {
    RELAYSIM_ASSERT(groups.empty(), "no columns of its own per group");
    // A run's last window may be of no length (its last events came at the instant the window
    // began): its rates have nothing to divide by.
    RELAYSIM_ASSERT(w.end >= w.start, "a window does not end before it starts");
    const relaysim::webhook::PlatformConfig& platform = spec_of(ctx_.scenario).platform;
    const Duration busy = world_->busy_time();
    std::uint32_t open = 0;
    for (BreakerState b : world_->breakers()) open += b == BreakerState::open ? 1 : 0;
    const Sample s{window_,
                   oldest_open_age(w.end),
                   store_->counts(),
                   w.seconds(),
                   to_seconds(busy - busy_before_),
                   static_cast<double>(platform.pods) * platform.concurrency_per_pod,
                   world_->pods_up(),
                   open};
    fill_row<kSeries>(s, row);
    busy_before_ = busy;
    window_.metrics.new_window();
  }

  std::uint64_t open_work() override { return unresolved(store_->counts()); }
  // (Each replay opens a request again.)
  WorkCount work() override {
    return {metrics_.acked + metrics_.replays[static_cast<int>(relaysim::webhook::ReplayOutcome::replayed)], metrics_.terminal_requests,
            open_->stuck()};
  }
  std::span<const std::uint64_t> open_by_group() const override { return open_->by_group(); }
  std::vector<bool> down_for_good() const override { return open_->down_for_good(); }

  GroupTally take_groups() override { return finals_->take(); }
  const LatencyHistogram& latency_so_far() const override { return finals_->tally().all().latency; }

  void restart_measuring(Time at) override {
    RELAYSIM_ASSERT(at >= measured_from_, "the warm-up ends no earlier than the run starts");
    metrics_.restart();
    finals_->restart();
    measured_from_ = at;
    busy_at_warmup_ = world_->busy_time();
  }

  std::unique_ptr<SystemReport> finish(Time end, bool judged, std::uint64_t open) override {
    RELAYSIM_ASSERT(end >= measured_from_, "a run ends no earlier than its warm-up");
    Figures f;
    if (judged) {
      const relaysim::webhook::StoreCounts counts = store_->counts();
      requests_->finish(end, counts, store_->notices());
      breakers_->finish(end, world_->breakers());
      f.unresolved = unresolved(counts);
    } else {
      // A run cut short may have left the store unusable (out of memory, a failed database):
      // count from what the platform reported instead.
      f.unresolved = open;
    }
    for (std::size_t i = 0; i < kInvariantCount; ++i) f.violations[i] = ctx_.ledger.count(i);
    for (int c = 0; c < kDuplicateCauseCount; ++c) f.oracle.duplicates[static_cast<std::size_t>(c)] = requests_->duplicates(static_cast<DuplicateCause>(c));
    f.oracle.rescued = requests_->rescued_claims();
    f.oracle.stale = requests_->stale_completions();
    f.oracle.stale_applied = requests_->stale_applied();
    f.oracle.retry_after_honoured = requests_->retry_after_honoured();
    f.oracle.lost = requests_->lost();
    f.end = end;
    f.stuck = open_->stuck();
    if (judged) {
      f.oldest_open_age_s = oldest_open_age(end);
      if (ctx_.records != nullptr) record_open(*ctx_.records);
    }
    const relaysim::webhook::PlatformConfig& platform = spec_of(ctx_.scenario).platform;
    f.busy_s = to_seconds(world_->busy_time() - busy_at_warmup_);
    f.slot_s = static_cast<double>(platform.pods) * platform.concurrency_per_pod * to_seconds(end - measured_from_);
    f.metrics = std::move(metrics_);
    // A run that drained ended early only because nothing could happen any more: a crash due
    // before the scenario's end never came. A run cut short may still have had it coming.
    const Time horizon = judged ? std::max(end, Time{} + ctx_.scenario.duration) : end;
    std::vector<TimelineEvent> timeline = world_timeline(spec_of(ctx_.scenario), f.metrics.transitions);
    return std::make_unique<Report>(std::move(f), world_->store_faults().never_happened(horizon), std::move(timeline));
  }

 private:
  static std::unique_ptr<Store> make_store(const RunContext& ctx) {
    if (ctx.scenario.store == StoreKind::sqlite) {
      return std::make_unique<relaysim::webhook::SqliteStore>(ctx.sqlite_path, Durability::off);
    }
    return std::make_unique<relaysim::webhook::MemoryStore>(spec_of(ctx.scenario).platform.retention);
  }
  // Every request still open, beside those that ended badly: what an on-call engineer would
  // chase next. (Only for a judged run: one cut short may have left the store unusable.)
  void record_open(RecordSink& sink) {
    const std::vector<std::string> names = group_names(world_->spec());
    EntityRecord r;
    r.reason = "open_at_end";
    r.ended = kTimeNever;
    open_->each_open([&](relaysim::webhook::RequestId id) {
      const std::optional<relaysim::webhook::RequestRow> row = store_->get(id);
      RELAYSIM_ASSERT(row.has_value(), "an open request is in the store");
      r.key = row->cxid + '/' + row->request_id;
      r.outcome = to_string(row->status);
      r.attempts = row->attempts;
      r.created = row->created_at;
      const std::optional<std::uint32_t> g = world_->endpoint_group(row->cxid);
      r.group = g ? names[*g] : std::string();
      sink.record(r);
    });
  }
  // How long the oldest request open now (outside the groups down for good) has waited: NaN
  // with none. It is open, so the store still holds it.
  double oldest_open_age(Time now) {
    const std::optional<relaysim::webhook::RequestId> id = open_->oldest();
    if (!id) return std::numeric_limits<double>::quiet_NaN();
    const std::optional<relaysim::webhook::RequestRow> row = store_->get(*id);
    RELAYSIM_ASSERT(row.has_value(), "an open request is in the store");
    return to_seconds(now - row->created_at);
  }
  static std::uint64_t unresolved(const relaysim::webhook::StoreCounts& c) {
    std::uint64_t n = 0;
    for (int st = 0; st < static_cast<int>(relaysim::webhook::Status::delivered); ++st) n += c.by_status[st];
    return n;
  }

  RunContext& ctx_;
  std::unique_ptr<Store> store_;
  WebhookBuses buses_;
  FingerprintSink<relaysim::webhook::Events> fp_model_;
  FingerprintSink<WorldEvents> fp_world_;
  FingerprintSink<ProcessEvents> fp_processes_;
  Metrics metrics_;
  Figures window_;             // what the current window of the time series counted
  Duration busy_before_{};     // the pods' busy slot-time when the window began
  Time measured_from_{};       // the end of the warm-up
  Duration busy_at_warmup_{};  // the pods' busy slot-time then
  std::unique_ptr<World> world_;
  std::optional<Finals> finals_;
  std::optional<OpenRequests> open_;
  std::unique_ptr<RequestChecker> requests_;
  std::unique_ptr<BreakerChecker> breakers_;
};

// Memory a held request costs, all parts together: the store's row and attempts, the oracle's
// record, the metrics (measured on the day-long scenario; see reports/performance.md).
constexpr double kBytesPerHeldRequest = 600;
// A pod's slot for one request in flight (its row, URL and attempt strings).
constexpr double kBytesPerSlot = 400;
// One more attempt of a request: the store's attempt row (measured on a scenario whose endpoints
// always fail, so every request retries until its deadline).
constexpr double kBytesPerAttempt = 60;
// A request's rows in an in-memory SQLite database, which keeps every request.
constexpr double kBytesPerSqliteRow = 300;

// What the webhook platform is (sim/system_of.h).
struct Manifest {
  using Spec = WebhookSpec;
  using Simulation = webhook::Simulation;
  static constexpr std::string_view kName = "webhook";
  static constexpr std::string_view kTitle = "a webhook platform whose destination URLs live in an external service (ServiceB)";
  static constexpr std::string_view kGroupDimension = webhook::kGroupDimension;
  static const Schema<Spec>& schema() { return spec_schema(); }
  static constexpr const auto& kMetrics = webhook::kMetrics;
  static constexpr const auto& kSeries = webhook::kSeries;
  static constexpr const auto& kPipeline = webhook::kPipeline;
  static constexpr const auto& kInvariants = webhook::kInvariants;
  static constexpr const auto& kMutants = relaysim::webhook::kMutants;
  static std::vector<LifecycleDiagram> lifecycles() {
    const auto name = [](auto state) { return to_string(state); };
    return {diagram_of("webhook-request", "A webhook request", relaysim::webhook::kRequestLifecycle, name),
            diagram_of("webhook-serviceb-breaker", "A pod's circuit breaker around ServiceB", kBreakerLifecycle, name)};
  }
};

class WebhookSystem final : public SystemOf<Manifest> {
 public:
  // A webhook platform is one station: every dispatch slot of every pod is a server, and a
  // request holds it for the endpoint's answer (plus ServiceB's when there is no URL cache to
  // answer for it). Arrivals at the load's peak (sim/world/arrivals.h).
  std::vector<std::string> groups(const Scenario& s) const override { return group_names(spec_of(s)); }
  std::optional<queueing::Station> station(const Scenario& s) const override {
    const WebhookSpec& spec = spec_of(s);
    std::vector<WeightedArrivals> load;
    for (const LoadSegment& seg : spec.load) load.push_back({&seg.arrivals, 1.0});
    const PeakLoad peak = peak_load(load);
    queueing::Station st;
    st.lambda = peak.rate_per_s;
    st.ca2 = peak.scv;
    st.bursty = peak.bursty;
    LatencySpec service;
    service.shape = LatencyShape::mixture;
    for (const EndpointGroup& g : spec.endpoints) {
      service.mixture.push_back(g.latency);
      service.mixture.back().weight = g.count;
    }
    if (st.lambda <= 0 || service.mixture.empty()) return std::nullopt;
    LatencyMoments m = moments(service);
    if (spec.platform.url_cache_ttl <= Duration{}) {
      const LatencyMoments b = moments(spec.serviceb.latency);
      const double variance = m.scv * m.mean_s * m.mean_s + b.scv * b.mean_s * b.mean_s;
      m.mean_s += b.mean_s;
      m.scv = variance / (m.mean_s * m.mean_s);
    }
    st.mean_s = m.mean_s;
    st.cs2 = m.scv;
    st.c = spec.platform.pods * spec.platform.concurrency_per_pod;
    return st;
  }
  std::vector<queueing::StationLoad> stations(const Scenario& s) const override {
    if (const auto st = station(s)) return {{"dispatch", "dispatch slots", *st}};
    return {};
  }

  // Rates and counts divided by n, each count at least 1; a pod keeps its breaker and cache, so
  // the servers go from each pod's slots. The tenants and endpoints shrink with the load, so each
  // still sees as many calls and the URL cache answers as often.
  std::optional<std::vector<std::string>> scaled(const Scenario& s, std::uint32_t n) const override {
    RELAYSIM_ASSERT(n >= 1, "a scale of 1:n has n >= 1");
    const WebhookSpec& w = spec_of(s);
    const auto divided = [n](double v) { return std::to_string(static_cast<std::uint64_t>(std::max(1.0, std::round(v / n)))); };
    std::vector<std::string> out;
    for (std::size_t i = 0; i < w.load.size(); ++i) {
      const ArrivalSpec& a = w.load[i].arrivals;
      const std::string key = "webhook.load." + std::to_string(i);
      if (a.burst > 0) {
        out.push_back(key + ".burst=" + divided(static_cast<double>(a.burst)));
      } else {
        const auto rate = [n](double per_s) {
          std::array<char, 32> text{};
          const auto [end, ec] = std::to_chars(text.data(), text.data() + text.size(), per_s / n);
          RELAYSIM_ASSERT(ec == std::errc{}, "a double fits 32 characters");
          return std::string(text.data(), end) + "/s";
        };
        out.push_back(key + ".rate=" + rate(a.rate_per_s));
        if (a.ramps()) out.push_back(key + ".ramp_to=" + rate(a.ramp_to_per_s));
      }
    }
    out.push_back("webhook.platform.concurrency_per_pod=" + divided(w.platform.concurrency_per_pod));
    // Each pod's cache for a tenant N times fewer: as full, so it evicts as often.
    out.push_back("webhook.platform.url_cache.max_entries=" + divided(static_cast<double>(w.platform.url_cache_max_entries)));
    if (w.cxids != 0) out.push_back("webhook.world.cxids=" + divided(w.cxids));
    for (std::size_t i = 0; i < w.endpoints.size(); ++i) {
      out.push_back("webhook.world.endpoints." + std::to_string(i) + ".count=" + divided(w.endpoints[i].count));
    }
    for (std::size_t i = 0; i < w.replays.size(); ++i) {
      out.push_back("webhook.replays." + std::to_string(i) + ".count=" + divided(w.replays[i].count));
    }
    return out;
  }

  Footprint footprint(const Scenario& s, bool database_in_memory) const override {
    const WebhookSpec& w = spec_of(s);
    const relaysim::webhook::PlatformConfig& p = w.platform;
    // The share of requests that may keep retrying until their deadline: those to endpoints that
    // go down or have incidents, and those that keep failing at a steady error rate.
    double stuck = 0;
    const double endpoints = w.endpoint_count();
    RELAYSIM_ASSERT(endpoints > 0, "a world has endpoints");
    for (const EndpointGroup& g : w.endpoints) {
      const double fails = std::max({g.error_rate, g.blackhole_rate, g.dns_failure_rate});
      const double share = !g.down.empty() || !g.incidents.empty() ? 1.0 : fails * fails * fails * fails;
      stuck += share * g.count / endpoints;
    }
    Duration outages{};
    for (const Outage& o : w.serviceb.outages) outages += std::min(o.window.length, s.duration);
    Footprint f;
    // ServiceB's deferrals: a request that arrives while ServiceB is down is deferred by
    // dependency_backoff until it comes back, on average about as often as in half the outage.
    // Once its pod's breaker opens it waits for the breaker instead (model/webhook/dispatcher.h),
    // usually after one deferral; but a breaker that never trips (min_calls out of reach at a low
    // load) leaves the backoff to pace it, and this bound must hold then too: it feeds the default
    // event limit, past which a run is judged a livelock. A short fixed backoff through a long
    // outage can be billions of firings.
    for (const Outage& o : w.serviceb.outages) {
      const Time end = Time{} + s.duration;
      const Time from = std::min(o.window.at, end);
      const Time to = std::min(o.window.end(), end);
      if (to <= from) continue;
      double blocked = 0;
      for (const LoadSegment& l : w.load) blocked += l.arrivals.expected_calls(to) - l.arrivals.expected_calls(from);
      f.timer_firings += blocked * mean_retries_within(p.dependency_backoff, (to - from) / 2);
    }
    f.timers_advice = "lengthen webhook.platform.dependency_backoff (its initial or max_interval), or shorten ServiceB's outages";
    double held = 0;
    for (const LoadSegment& l : w.load) {
      const double calls = l.arrivals.expected_calls(Time{} + s.duration);
      f.calls += calls;
      // With a retention, a request is held from its creation until `retention` after it
      // finishes: a lease or so for most, the deadline for the stuck. (The SQLite store keeps
      // every row, and so the oracle keeps every record.)
      if (p.retention && s.store == StoreKind::memory && l.arrivals.burst == 0) {
        const double hold_s = to_seconds(*p.retention + p.lease + outages) + stuck * to_seconds(std::min(p.retry.deadline, s.duration));
        held += std::min(calls, l.arrivals.max_rate_per_s() * hold_s);
      } else {
        held += calls;
      }
    }
    f.parts.push_back({held * kBytesPerHeldRequest, format_count(held) + " requests held at once",
                       p.retention ? "shorten the load, lower its rate, or shorten webhook.platform.retention"
                                   : "set webhook.platform.retention (finished requests are then forgotten after it), "
                                     "shorten the load, or lower its rate"});
    // Every request acknowledged keeps its endpoint group, for the backlog by group (OpenWork).
    f.parts.push_back({f.calls * OpenWork::kBytesPerId, format_count(f.calls) + " requests' endpoint groups",
                       "shorten the load, or lower its rate"});
    if (s.store == StoreKind::sqlite && database_in_memory) {
      f.parts.push_back({f.calls * kBytesPerSqliteRow, format_count(f.calls) + " requests in the in-memory SQLite database",
                         "give the run a database file (--sqlite-path), shorten the load, or lower its rate"});
    }
    // Each retry of a held request keeps its attempt row.
    // (Retries stop at the deadline, or at the end of the run if it comes first.)
    const double retries = held * stuck * mean_retries_within(p.retry.backoff, std::min(p.retry.deadline, s.duration));
    f.parts.push_back({retries * kBytesPerAttempt, format_count(retries) + " retries kept in the requests' histories",
                       "lengthen webhook.platform.retry.initial, shorten its deadline, or make fewer endpoints fail"});
    const double slots = p.pods * static_cast<double>(p.concurrency_per_pod);
    f.parts.push_back({slots * kBytesPerSlot, format_count(slots) + " delivery slots (pods × concurrency_per_pod)",
                       "lower webhook.platform.pods or concurrency_per_pod"});
    double url_versions = 0;
    for (const UrlChange& c : w.serviceb.url_changes) url_versions += c.fraction * w.cxid_count();
    // Per cxid: ServiceB's table and the oracle's (a lookup list head per pod).
    f.parts.push_back({w.cxid_count() * (48.0 + 4.0 * p.pods) + url_versions * 8.0,
                       format_count(w.cxid_count()) + " cxids with " + format_count(url_versions) + " URL changes",
                       "give the endpoint groups fewer cxids, run fewer pods, or give ServiceB fewer url_changes"});
    f.parts.push_back({endpoints * 16.0, format_count(endpoints) + " endpoints", "give the endpoint groups smaller counts"});
    return f;
  }
};

}  // namespace

const System& system() {
  static const WebhookSystem instance;
  return instance;
}

}  // namespace relaysim::sim::webhook
