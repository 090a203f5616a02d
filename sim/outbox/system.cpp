#include "sim/outbox/system.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include "model/outbox/consumer.h"
#include "model/outbox/inbox.h"
#include "model/outbox/memory_store.h"
#include "model/core/assert.h"
#include "model/outbox/mutants.h"
#include "model/outbox/sqlite_store.h"
#include "sim/outbox/oracle.h"
#include "sim/outbox/report.h"
#include "sim/outbox/spec.h"
#include "sim/outbox/world.h"
#include "sim/report/text.h"
#include "sim/system_of.h"
#include "sim/timeline.h"

namespace relaysim::sim::outbox {

namespace {

using relaysim::outbox::EffectStore;
using relaysim::outbox::Store;

// Where shard `s` (and the downstream's database) live: shard 0 at the run's path, the others
// beside it; all in memory when the run's database is.
std::string path_of(const std::string& base, const std::string& suffix) {
  if (base == ":memory:" || suffix.empty()) return base;
  const std::string path = base + suffix;
  for (const char* extra : {"", "-wal", "-shm"}) std::filesystem::remove(path + extra);  // ours: named after the run's
  return path;
}

// What a run's figures are split by: a message's shard.
constexpr std::string_view kGroupDimension = "shard";
std::vector<std::string> shard_names(std::uint32_t shards) {
  std::vector<std::string> out;
  for (std::uint32_t s = 0; s < shards; ++s) out.push_back("shard-" + std::to_string(s));
  return out;
}

// Every message's end: counted by its shard, and recorded as an entity when it failed — refused
// by the downstream, out of attempts, or failed by the rescuer.
// The messages open now are counted by shard too: committed, not yet final.
class Finals final : public SinkFor<model::OperationDone>, public SinkFor<model::Finished>, public SinkFor<model::LeaderWrote> {
 public:
  Finals(RecordSink* sink, std::uint32_t shards) : sink_(sink), tally_(kGroupDimension, shard_names(shards)), open_(shards, 0) {
    RELAYSIM_ASSERT(tally_.groups() == shards, "a group for every shard");
  }
  void on(const model::OperationDone& e) override {
    if (e.committed && e.shard < open_.size()) open_[e.shard] += e.count();
  }
  void on(const model::Finished& e) override {
    if (!e.applied || !model::is_final(e.finish.status)) return;
    closed(e.record.shard);
    const bool handled = e.finish.status == model::Status::handled;
    tally_.finished(e.record.shard, to_string(e.finish.status), handled);
    if (handled) {
      tally_.latency(e.record.shard, e.finish.at - e.record.created_at);
      return;
    }
    put(e.record.shard, e.record.id, e.finish.reason, e.record.attempt, e.record.created_at, e.finish.at);
  }
  void on(const model::LeaderWrote& e) override {
    if (!e.applied || e.write != model::LeaderWrite::rescue) return;
    for (const model::Message& m : e.messages) {
      if (m.status != model::Status::failed) continue;
      closed(e.shard);
      tally_.finished(e.shard, to_string(m.status), false);
      put(e.shard, m.id, m.reason, m.attempt, m.created_at, e.at);
    }
  }
  GroupTally take() { return std::move(tally_); }
  const GroupTally& tally() const { return tally_; }
  void restart() { tally_.restart(); }
  std::span<const std::uint64_t> open_by_group() const { return open_; }

 private:
  // A message of `shard` is final. (A final the shard never committed is the oracle's to report.)
  void closed(model::ShardId shard) {
    if (shard < open_.size() && open_[shard] > 0) --open_[shard];
  }
  void put(model::ShardId shard, model::RowId id, model::Reason reason, std::uint32_t attempts, Time created, Time at) {
    if (sink_ == nullptr) return;
    RELAYSIM_ASSERT(shard < tally_.groups(), "a failed message's shard is a group");
    RELAYSIM_ASSERT(at >= created, "a message ends no earlier than it was created");
    record_.group = tally_.name(shard);
    record_.key.assign(record_.group).append("/").append(std::to_string(id));
    record_.outcome = to_string(model::Status::failed);
    record_.reason = to_string(reason);
    record_.attempts = attempts;
    record_.created = created;
    record_.ended = at;
    sink_->record(record_);
  }

  RecordSink* sink_;  // nullptr: no records wanted
  GroupTally tally_;
  std::vector<std::uint64_t> open_;  // by shard: committed, not yet final
  EntityRecord record_;  // reused: its buffers are allocated once
};

// One outbox run: the shards' stores, the downstream's database, the buses, the world, and the
// sinks attached to the buses.
class Simulation final : public sim::Simulation {
 public:
  explicit Simulation(RunContext& ctx)
      : ctx_(ctx),
        spec_(spec_of(ctx.scenario)),
        fp_model_(ctx.fingerprint),
        fp_world_(ctx.fingerprint),
        fp_processes_(ctx.fingerprint),
        fp_coordinator_(ctx.fingerprint),
        oracle_(ctx.scenario, ctx.ledger),
        metrics_(spec_.platform.shards) {
    const bool sqlite = ctx.scenario.store == StoreKind::sqlite;
    for (std::uint32_t s = 0; s < spec_.platform.shards; ++s) {
      if (sqlite) {
        auto store = std::make_unique<relaysim::outbox::SqliteStore>(
            path_of(ctx.sqlite_path, s == 0 ? "" : "-shard" + std::to_string(s)), Durability::off);
        dbs_.push_back(&store->db());
        stores_.push_back(std::move(store));
      } else {
        stores_.push_back(std::make_unique<relaysim::outbox::MemoryStore>());
        dbs_.push_back(nullptr);
      }
      shards_.push_back(stores_.back().get());
    }
    RELAYSIM_ASSERT(shards_.size() == spec_.platform.shards && dbs_.size() == shards_.size(),
                    "a store and a database slot for every shard");
    if (sqlite) {
      effects_ = std::make_unique<relaysim::outbox::SqliteEffectStore>(path_of(ctx.sqlite_path, "-downstream"), Durability::off);
    } else {
      effects_ = std::make_unique<relaysim::outbox::MemoryEffectStore>();
    }
    buses_.model.attach(fp_model_);
    buses_.world.attach(fp_world_);
    buses_.processes.attach(fp_processes_);
    oracle_.attach(buses_.model, buses_.world);
    buses_.model.attach(metrics_);
    buses_.world.attach(metrics_);
    buses_.processes.attach(metrics_);
    world_ = std::make_unique<World>(ctx.scenario, ctx.kernel, shards_, dbs_, *effects_, buses_);
    world_->coordinator().bus().attach(fp_coordinator_);
    oracle_.attach(world_->coordinator().bus());
    if (ctx.series) {
      window_.metrics = Metrics(spec_.platform.shards);
      buses_.model.attach(window_.metrics);
      buses_.world.attach(window_.metrics);
      buses_.processes.attach(window_.metrics);
    }
    finals_.emplace(ctx.records, spec_.platform.shards);
    buses_.model.attach(*finals_);
  }

  void sample(const SeriesWindow&, std::span<double> row, std::span<double> groups) override {
    RELAYSIM_ASSERT(groups.empty(), "no columns of its own per group");
    relaysim::outbox::StoreCounts sum;
    for (Store* s : shards_) {
      const relaysim::outbox::StoreCounts c = s->counts();
      for (std::size_t i = 0; i < sum.by_status.size(); ++i) sum.by_status[i] += c.by_status[i];
      sum.messages += c.messages;
    }
    fill_row<kSeries>(Sample{window_, sum}, row);
    window_.metrics = Metrics(spec_.platform.shards);
  }

  std::uint64_t open_work() override { return unresolved(); }
  WorkCount work() override { return {metrics_.committed, metrics_.finals}; }
  std::span<const std::uint64_t> open_by_group() const override { return finals_->open_by_group(); }

  GroupTally take_groups() override { return finals_->take(); }
  const LatencyHistogram& latency_so_far() const override { return finals_->tally().all().latency; }

  void restart_measuring(Time at) override {
    metrics_.restart(at);
    finals_->restart();
  }

  std::unique_ptr<SystemReport> finish(Time end, bool judged, std::uint64_t /*open: its shards' stores count it*/) override {
    Figures f;
    if (judged) oracle_.finish(end, shards_);
    f.unresolved = unresolved();
    for (std::size_t i = 0; i < kInvariantCount; ++i) f.violations[i] = ctx_.ledger.count(i);
    for (int c = 0; c < kDuplicateCauseCount; ++c) f.duplicates[static_cast<std::size_t>(c)] = oracle_.duplicates(static_cast<DuplicateCause>(c));
    f.lost = oracle_.lost();
    f.stuck = oracle_.stuck();
    f.stale_writes = oracle_.stale_writes_kept_out();
    f.end = end;
    metrics_.close(end);
    f.metrics = std::move(metrics_);
    std::vector<TimelineEvent> timeline;
    add_to_timeline(spec_.log.outages, "log", timeline);
    add_to_timeline(spec_.downstream.outages, "downstream", timeline);
    add_to_timeline(spec_.downstream.slowdowns, "downstream", timeline);
    add_to_timeline(spec_.coordinator.slowdowns, "coordinator", timeline);
    for (const ShardFault& sf : spec_.shard_faults) {
      timeline.push_back({sf.window.at, sf.window.length, "store_fault", "shard-" + std::to_string(sf.shard), std::string(to_string(sf.failure)), true});
    }
    for (const Term& t : f.metrics.terms) {
      timeline.push_back({t.from, t.to == kTimeNever ? kForever : t.to - t.from, "leader", "shard-" + std::to_string(t.shard),
                          "pod-" + std::to_string(t.pod - 1) + ", fencing token " + std::to_string(t.token)});
    }
    return std::make_unique<Report>(std::move(f), std::move(timeline));
  }

 private:
  std::uint64_t unresolved() {
    std::uint64_t n = 0;
    for (Store* s : shards_) {
      const relaysim::outbox::StoreCounts c = s->counts();
      n += c.by_status[0] + c.by_status[1];
    }
    return n;
  }

  RunContext& ctx_;
  const OutboxSpec& spec_;
  std::vector<std::unique_ptr<Store>> stores_;
  std::vector<Store*> shards_;
  std::vector<Db*> dbs_;
  std::unique_ptr<EffectStore> effects_;
  OutboxBuses buses_;
  FingerprintSink<relaysim::outbox::Events> fp_model_;
  FingerprintSink<WorldEvents> fp_world_;
  FingerprintSink<ProcessEvents> fp_processes_;
  FingerprintSink<CoordinatorBus> fp_coordinator_;
  Oracle oracle_;
  Metrics metrics_;
  Figures window_;  // what the current window of the time series counted
  std::optional<Finals> finals_;
  std::unique_ptr<World> world_;
};

namespace mutant = relaysim::outbox::mutant;

// The outbox relay's planted bugs.
constexpr const Mutant* kMutants[] = {
    &mutant::publish_before_commit,  &mutant::write_without_fence,   &mutant::no_inbox,
    &mutant::inbox_outside_effect_tx, &mutant::rescuer_never_runs,   &mutant::relock_skips_status,
    &mutant::next_attempt_ignored,   &mutant::attempts_never_exhausted, &mutant::producer_session_reused,
    &mutant::offsets_committed_before_handling, &mutant::rescue_early, &mutant::key_order_ignored,
    &mutant::retry_backoff_one_step_long, &mutant::timeout_taken_as_written, &mutant::lease_counted_from_answer,
};

// Memory a committed message costs, all parts together: the store's row, the oracle's record, the
// log's record until it is committed, the downstream's inbox row.
constexpr double kBytesPerMessage = 300;
// Memory every pod's consumer keeps for each partition of the log, assigned to it or not (its
// queues of offsets and held records), measured: about 2 KiB.
constexpr double kBytesPerConsumerPartition = 2200;
constexpr double kBytesPerSqliteRow = 250;

// What the outbox relay is (sim/system_of.h).
struct Manifest {
  using Spec = OutboxSpec;
  using Simulation = outbox::Simulation;
  static constexpr std::string_view kName = "outbox";
  static constexpr std::string_view kTitle =
      "a transactional-outbox relay: fenced shard leaders publish to a partitioned log, consumers re-lock, "
           "handle and finish, an inbox applies each effect once";
  static constexpr std::string_view kGroupDimension = outbox::kGroupDimension;
  static const Schema<Spec>& schema() { return spec_schema(); }
  static constexpr const auto& kMetrics = outbox::kMetrics;
  static constexpr const auto& kSeries = outbox::kSeries;
  static constexpr const auto& kPipeline = outbox::kPipeline;
  static constexpr const auto& kInvariants = outbox::kInvariants;
  static constexpr const auto& kMutants = outbox::kMutants;
  static std::vector<LifecycleDiagram> lifecycles() {
    return {diagram_of("outbox-message", "An outbox message", relaysim::outbox::kMessageLifecycle, [](auto s) { return to_string(s); })};
  }
};

// The relay's consumers at the load's peak: every committed outbox row is a record a consumer
// handles, holding one of its pod's slots for the downstream's answer. Partitions are spread over
// the pods (sim/outbox/log.h), so the pod with the most partitions takes the largest share, and
// its slots are the station. The leaders' publishing is not a station here: a scan takes up to
// `batch` rows at once and scans again while it comes back full.
std::vector<queueing::StationLoad> outbox_stations(const OutboxSpec& spec) {
  std::vector<WeightedArrivals> all;
  for (const LoadSegment& l : spec.load) all.push_back({&l.arrivals, l.messages * (1.0 - l.rollbacks)});
  const PeakLoad peak = peak_load(all);
  if (peak.rate_per_s <= 0) return {};
  const std::uint32_t partitions = spec.log.partitions;
  const std::uint32_t members = std::min(spec.platform.pods, partitions);
  RELAYSIM_ASSERT(members >= 1, "a group with a member and a partition");
  const std::uint32_t most = (partitions + members - 1) / members;
  const LatencyMoments m = moments(spec.downstream.latency);
  const queueing::Station st{peak.rate_per_s * most / partitions, m.mean_s, spec.platform.concurrency_per_pod, peak.scv, m.scv, peak.bursty};
  return {{"consumers", "handling slots of the pod with the most partitions (" + std::to_string(most) + " of " +
                            std::to_string(partitions) + ")", st}};
}

class OutboxSystem final : public SystemOf<Manifest> {
 public:
  std::vector<std::string> groups(const Scenario& s) const override { return shard_names(spec_of(s).platform.shards); }
  std::vector<queueing::StationLoad> stations(const Scenario& s) const override { return outbox_stations(spec_of(s)); }
  Footprint footprint(const Scenario& s, bool database_in_memory) const override {
    const OutboxSpec& spec = spec_of(s);
    Footprint f;
    double messages = 0;
    for (const LoadSegment& l : spec.load) {
      const double calls = l.arrivals.expected_calls(Time{} + s.duration);
      f.calls += calls;
      messages += calls * l.messages;
    }
    f.parts.push_back({messages * kBytesPerMessage, format_count(messages) + " messages kept",
                       "shorten the load, or lower its rate"});
    const double pairs = static_cast<double>(spec.platform.pods) * spec.log.partitions;
    f.parts.push_back({pairs * kBytesPerConsumerPartition,
                       format_count(pairs) + " partition queues of the consumers (pods × log partitions)",
                       "lower outbox.platform.pods or outbox.log.partitions"});
    // Every pod campaigns for every shard, each shard's leader scans and rescues, and every pod's
    // consumer polls at least once per poll wait.
    const relaysim::outbox::RelayConfig& c = spec.platform;
    const double seconds = to_seconds(s.duration);
    const double pods = c.pods;
    const double shards = c.shards;
    RELAYSIM_ASSERT(c.renew_every > Duration::zero() && c.scan_every > Duration::zero() &&
                        c.rescue_every > Duration::zero(),
                    "a validated relay's timers have periods longer than zero");
    f.timer_firings = seconds * (pods * shards / to_seconds(c.renew_every) + shards / to_seconds(c.scan_every) +
                                 shards / to_seconds(c.rescue_every) + pods / to_seconds(relaysim::outbox::Consumer::kPollWait));
    f.timers_advice = "lengthen outbox.platform.renew_every, scan_every or rescue_every, or shorten the run";
    if (s.store == StoreKind::sqlite && database_in_memory) {
      f.parts.push_back({messages * kBytesPerSqliteRow, format_count(messages) + " messages in the in-memory SQLite databases",
                         "give the run a database file (--sqlite-path), shorten the load, or lower its rate"});
    }
    return f;
  }
};

}  // namespace

const System& system() {
  static const OutboxSystem instance;
  return instance;
}

}  // namespace relaysim::sim::outbox
