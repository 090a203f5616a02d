#include "sim/run.h"

#include "model/store/memory_store.h"
#include "model/store/sqlite_store.h"
#include "sim/scenario/expect.h"
#include "sim/world/world.h"

namespace relaysim::sim {

using namespace relaysim::webhook;

namespace {

// Forwards every event to the oracle and the metrics, and mixes the significant ones into the
// run's fingerprint: equal fingerprints mean the platform did the same things at the same times.
class Fanout final : public Observer {
 public:
  explicit Fanout(Fingerprint& fp) : fp_(fp) {}
  Oracle* oracle = nullptr;
  Metrics* metrics = nullptr;

  void ingested(PodId pod, const NewRequest& r, const CreateResult& c, Time at) override {
    fp_.mix(1);
    fp_.mix(c.id);
    fp_.mix(static_cast<std::uint64_t>(c.outcome));
    fp_.mix(at);
    oracle->ingested(pod, r, c, at);
    metrics->ingested(pod, r, c, at);
  }
  void claimed(PodId pod, const RequestRow& row, Time at) override {
    fp_.mix(2);
    fp_.mix(row.id);
    fp_.mix(pod);
    oracle->claimed(pod, row, at);
    metrics->claimed(pod, row, at);
  }
  void attempt_started(PodId pod, const RequestRow& row, std::uint32_t n, std::string_view url, std::uint64_t v,
                       Time at) override {
    fp_.mix(3);
    fp_.mix(row.id);
    fp_.mix(n);
    fp_.mix(v);
    fp_.mix(at);
    oracle->attempt_started(pod, row, n, url, v, at);
    metrics->attempt_started(pod, row, n, url, v, at);
  }
  void attempt_finished(PodId pod, const AttemptRow& a, const HttpResult& h, Verdict v) override {
    oracle->attempt_finished(pod, a, h, v);
    metrics->attempt_finished(pod, a, h, v);
  }
  void completed(PodId pod, const RequestRow& row, const Completion& c, bool applied) override {
    fp_.mix(4);
    fp_.mix(row.id);
    fp_.mix(static_cast<std::uint64_t>(c.status) << 8 | static_cast<std::uint64_t>(c.reason) << 1 | (applied ? 1 : 0));
    fp_.mix(c.at);
    fp_.mix(c.due_at);
    oracle->completed(pod, row, c, applied);
    metrics->completed(pod, row, c, applied);
  }
  void tenant_notified(const RequestRow& row, Status s, Reason r, Time at) override {
    oracle->tenant_notified(row, s, r, at);
    metrics->tenant_notified(row, s, r, at);
  }
  void url_looked_up(PodId pod, std::string_view cxid, bool hit, Time at) override {
    metrics->url_looked_up(pod, cxid, hit, at);
  }
  void breaker_changed(PodId pod, BreakerState from, BreakerState to, Time at) override {
    fp_.mix(5);
    fp_.mix(pod);
    fp_.mix(static_cast<std::uint64_t>(to));
    fp_.mix(at);
    oracle->breaker_changed(pod, from, to, at);
    metrics->breaker_changed(pod, from, to, at);
  }
  void client_created(const ClientKey& k, const IngestResult& r, Time at) override {
    oracle->client_created(k, r, at);
    metrics->client_created(k, r, at);
  }
  void client_rejected(Time at) override {
    fp_.mix(6);
    oracle->client_rejected(at);
    metrics->client_rejected(at);
  }
  void serviceb_called(std::uint32_t pod, std::uint32_t cxid, Time at, Time answer_at, bool ok, bool outage) override {
    oracle->serviceb_called(pod, cxid, at, answer_at, ok, outage);
    metrics->serviceb_called(pod, cxid, at, answer_at, ok, outage);
  }
  void http_sent(std::uint32_t pod, RequestId id, const SendFate& f, Time at) override {
    fp_.mix(7);
    fp_.mix(id);
    fp_.mix(static_cast<std::uint64_t>(f.status));
    fp_.mix(f.result_at);
    oracle->http_sent(pod, id, f, at);
    metrics->http_sent(pod, id, f, at);
  }
  void pod_crashed(std::uint32_t pod, Time at) override {
    fp_.mix(8);
    fp_.mix(pod);
    oracle->pod_crashed(pod, at);
    metrics->pod_crashed(pod, at);
  }
  void pod_started(std::uint32_t pod, Time at) override {
    fp_.mix(9);
    fp_.mix(pod);
    oracle->pod_started(pod, at);
    metrics->pod_started(pod, at);
  }

 private:
  Fingerprint& fp_;
};

std::unique_ptr<Store> make_store(StoreKind kind, const std::string& sqlite_path, std::optional<Duration> retention) {
  if (kind == StoreKind::sqlite) return std::make_unique<SqliteStore>(sqlite_path, Durability::off);
  return std::make_unique<MemoryStore>(retention);
}

double ratio(double a, double b) { return b == 0.0 ? 0.0 : a / b; }

std::map<std::string, double> collect(const Oracle& o, const Metrics& m, std::uint64_t unresolved) {
  const auto& t = m.terminal;
  auto sum = [](const auto& row) {
    double s = 0;
    for (auto v : row) s += static_cast<double>(v);
    return s;
  };
  const double delivered = sum(t[static_cast<int>(Status::delivered)]);
  const double failed = sum(t[static_cast<int>(Status::failed)]);
  const double dlq = sum(t[static_cast<int>(Status::dead_lettered)]);
  const double ingested = static_cast<double>(m.acked);
  double dups = 0;
  for (int c = 0; c < kDuplicateCauseCount; ++c) dups += static_cast<double>(o.duplicates(static_cast<DuplicateCause>(c)));
  double terminal_requests = 0, attempts_total = 0;
  for (std::size_t n = 0; n < m.attempts_per_request.size(); ++n) {
    terminal_requests += static_cast<double>(m.attempts_per_request[n]);
    attempts_total += static_cast<double>(n * m.attempts_per_request[n]);
  }
  auto d = [](std::uint64_t v) { return static_cast<double>(v); };
  std::map<std::string, double> v = {
      {"ingested", ingested},
      {"delivered", delivered},
      {"failed", failed},
      {"dead_lettered", dlq},
      {"dead_lettered_deadline", d(t[static_cast<int>(Status::dead_lettered)][static_cast<int>(Reason::deadline)])},
      {"failed_no_url", d(t[static_cast<int>(Status::failed)][static_cast<int>(Reason::no_url)])},
      {"unresolved", d(unresolved)},
      {"lost", d(o.lost())},
      {"dlq_rate", ratio(dlq, ingested)},
      {"delivered_rate", ratio(delivered, ingested)},
      {"violations", d(o.total_violations())},
      {"deadline_violations", d(o.violations(Invariant::deadline))},
      {"duplicate_violations", d(o.violations(Invariant::nodup))},
      {"retry_violations", d(o.violations(Invariant::retry))},
      {"breaker_violations", d(o.violations(Invariant::breaker))},
      {"url_violations", d(o.violations(Invariant::url))},
      {"idempotency_violations", d(o.violations(Invariant::idem))},
      {"loss_violations", d(o.violations(Invariant::noloss))},
      {"endpoint_duplicates", dups},
      {"duplicates_lost_response", d(o.duplicates(DuplicateCause::lost_response))},
      {"duplicates_late_response", d(o.duplicates(DuplicateCause::late_response))},
      {"duplicates_crash", d(o.duplicates(DuplicateCause::crash))},
      {"duplicates_lease_expired", d(o.duplicates(DuplicateCause::lease_expired))},
      {"duplicates_unexplained", d(o.duplicates(DuplicateCause::unexplained))},
      {"attempts", d(m.attempts)},
      {"attempts_per_request", ratio(attempts_total, terminal_requests)},
      {"deferrals", d(m.deferrals)},
      {"rescued", d(o.rescued_claims())},
      {"stale_completions", d(o.stale_completions())},
      {"notifications", d(m.notifications)},
      {"duplicate_ingests", d(m.created_by_outcome[static_cast<int>(IngestStatus::duplicate)])},
      {"conflicts", d(m.created_by_outcome[static_cast<int>(IngestStatus::conflict)])},
      {"rejected_ingests", d(m.rejected)},
      {"serviceb_calls", d(m.serviceb_calls)},
      {"serviceb_calls_in_outage", d(m.serviceb_calls_in_outage)},
      {"serviceb_calls_while_open", d(m.serviceb_calls_in_outage_by_state[static_cast<int>(BreakerState::open)])},
      {"serviceb_probes_in_outage", d(m.serviceb_calls_in_outage_by_state[static_cast<int>(BreakerState::half_open)])},
      {"breaker_opened", d(m.breaker_opened)},
      {"breaker_closed", d(m.breaker_closed)},
      {"cache_hit_ratio", ratio(d(m.cache_hits), d(m.cache_hits + m.cache_misses))},
      {"latency_p50_s", to_seconds(m.delivery_latency.quantile(0.50))},
      {"latency_p99_s", to_seconds(m.delivery_latency.quantile(0.99))},
      {"latency_max_s", to_seconds(m.delivery_latency.max())},
      {"crashes", d(m.crashes)},
  };
  return v;
}

}  // namespace

bool RunResult::pass() const {
  if (oracle->total_violations() != 0 || stalled() || hit_event_limit) return false;
  for (const auto& e : expectations) {
    if (!e.ok) return false;
  }
  return true;
}

RunResult run_scenario(const Scenario& input, RunOptions options) {
  RunResult result;
  result.scenario = input;
  Scenario& s = result.scenario;
  if (options.seed) s.seed = *options.seed;
  if (options.store) s.store = *options.store;

  std::unique_ptr<Store> store = make_store(s.store, options.sqlite_path, s.platform.retention);
  Fingerprint fp;
  fp.mix(s.seed);
  Fanout fanout(fp);
  World world(s, *store, fanout);
  result.oracle = std::make_unique<Oracle>(s, world.serviceb());
  result.metrics = std::make_unique<Metrics>();
  fanout.oracle = result.oracle.get();
  fanout.metrics = result.metrics.get();

  const Time end = Time{} + s.duration;
  const Duration slice = std::max<Duration>(s.duration / 100, Duration{1});
  bool more = true;
  for (Time t = Time{}; more && t < end;) {
    t = std::min(end, t + slice);
    more = world.run_until(t);
    if (options.progress) options.progress(world.kernel().now(), world.kernel().events_run());
    if (options.max_events != 0 && world.kernel().events_run() > options.max_events) {
      result.hit_event_limit = true;
      break;
    }
  }
  result.drained = !more;
  // Judge the run where it really stopped: at the duration, when the queue ran dry, or (a
  // livelock) where the event limit cut it off.
  result.end = more && !result.hit_event_limit ? std::max(world.kernel().now(), end) : world.kernel().now();

  std::vector<BreakerState> breakers;
  for (const auto& pod : world.pods()) {
    breakers.push_back(pod->resolver() != nullptr ? pod->resolver()->breaker().state() : BreakerState::closed);
  }
  const StoreCounts counts = store->counts();
  result.oracle->finish(result.end, counts, breakers);
  for (int st = 0; st < static_cast<int>(Status::delivered); ++st) result.unresolved += counts.by_status[st];

  fp.mix(world.kernel().events_run());
  result.fingerprint = fp.value();
  result.events = world.kernel().events_run();
  result.values = collect(*result.oracle, *result.metrics, result.unresolved);
  for (const Expectation& e : s.expect) {
    const double actual = result.values.at(e.metric);
    result.expectations.push_back({e.text, holds(e, actual), actual});
  }
  return result;
}

}  // namespace relaysim::sim
