// The outbox relay's metrics: a sink that counts what a run did (Metrics), what a run leaves
// behind (Figures), and the one table of every metric — name, unit, meaning and how it is
// computed — that `expect:`, `relaysim metrics`, the JSON, the summary and the docs are served from.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "model/outbox/events.h"
#include "model/outbox/node.h"
#include "sim/outbox/invariants.h"
#include "sim/outbox/oracle.h"
#include "sim/outbox/truth.h"
#include "sim/report/histogram.h"
#include "sim/report/metric.h"
#include "sim/report/violation_metrics.h"
#include "sim/report/series.h"
#include "sim/world/process.h"

namespace relaysim::sim::outbox {

namespace model = relaysim::outbox;

// One term of a shard's leadership as its pod saw it.
struct Term {
  model::ShardId shard = 0;
  std::uint32_t pod = 0;  // 1-based
  model::FenceToken token = 0;
  Time from{};
  Time to = kTimeNever;  // kTimeNever: still leading at the end
};

class Metrics final : public SinkFor<model::OperationDone>,
                      public SinkFor<model::LeadershipChanged>,
                      public SinkFor<model::LeaderWrote>,
                      public SinkFor<model::Published>,
                      public SinkFor<model::Relocked>,
                      public SinkFor<model::HandleDone>,
                      public SinkFor<model::Finished>,
                      public SinkFor<model::Polled>,
                      public SinkFor<model::StoreFailed>,
                      public SinkFor<OperationCalled>,
                      public SinkFor<LogAppended>,
                      public SinkFor<LogRefused>,
                      public SinkFor<RecordsDelivered>,
                      public SinkFor<GroupRebalanced>,
                      public SinkFor<MemberEvicted>,
                      public SinkFor<EffectApplied>,
                      public SinkFor<EffectDeduped>,
                      public SinkFor<HandlerDied>,
                      public SinkFor<ProcessCrashed>,
                      public SinkFor<ProcessPaused> {
 public:
  static constexpr std::size_t kTermsKept = 10'000;
  Metrics() = default;
  explicit Metrics(std::uint32_t shards) : believers_(shards), split_since_(shards, kTimeNever) {}

  void on(const model::OperationDone& e) override;
  void on(const model::LeadershipChanged& e) override;
  void on(const model::LeaderWrote& e) override;
  void on(const model::Published& e) override { ++publishes[static_cast<std::size_t>(e.outcome)]; }
  void on(const model::Relocked& e) override { ++relocks[static_cast<std::size_t>(e.outcome)]; }
  void on(const model::HandleDone& e) override { ++handlings[static_cast<std::size_t>(e.outcome)]; }
  void on(const model::Finished& e) override;
  void on(const model::Polled& e) override { polls += 1; evicted_polls += e.evicted ? 1 : 0; }
  void on(const model::StoreFailed&) override { ++store_failures; }
  void on(const OperationCalled& e) override;
  void on(const LogAppended&) override { ++records; }
  void on(const LogRefused& e) override { refused_records += e.records; }
  void on(const RecordsDelivered& e) override { deliveries += e.count; redeliveries += e.redelivered; }
  void on(const GroupRebalanced&) override { ++rebalances; }
  void on(const MemberEvicted& e) override { ++evictions[e.slow ? 1 : 0]; }
  void on(const EffectApplied&) override { ++effects; }
  void on(const EffectDeduped&) override { ++inbox_dedups; }
  void on(const HandlerDied&) override { ++handler_deaths; }
  void on(const ProcessCrashed& e) override;
  void on(const ProcessPaused&) override { ++pauses; }

  // Closes what is open at `end` (terms, split-brain windows).
  void close(Time end);
  // The warm-up ends at `at`: count from zero, keeping who believes they lead which shard (a
  // split brain then open counts from `at`) and the terms the run's timeline shows.
  void restart(Time at);

  std::uint64_t operations = 0;
  std::array<std::uint64_t, model::kOperationOutcomeNames.count + 1> operation_outcomes{};  // OperationOutcome, then: no pod up
  std::uint64_t committed = 0;  // messages
  std::array<std::array<std::uint64_t, model::kReasonCount>, model::kStatusCount> final{};
  std::uint64_t finals = 0;
  std::uint64_t attempts_of_finals = 0;
  std::uint64_t retries = 0;  // finished back to pending
  Time last_final_at{};
  LatencyHistogram latency;  // commit to handled
  std::array<std::uint64_t, model::kProducedNames.count> publishes{};
  std::uint64_t records = 0;
  std::uint64_t refused_records = 0;
  std::uint64_t deliveries = 0;
  std::uint64_t redeliveries = 0;
  std::uint64_t polls = 0;
  std::uint64_t evicted_polls = 0;
  std::array<std::uint64_t, model::kRelockNames.count> relocks{};
  std::array<std::uint64_t, model::kHandledCount> handlings{};
  std::uint64_t effects = 0;
  std::uint64_t inbox_dedups = 0;
  std::uint64_t handler_deaths = 0;
  std::uint64_t rebalances = 0;
  std::array<std::uint64_t, 2> evictions{};  // dead, slow
  std::uint64_t leader_terms = 0;
  std::uint64_t stale_writes = 0;  // leader writes fenced out
  std::uint64_t rescued = 0;
  std::uint64_t scans = 0;
  std::uint64_t store_failures = 0;
  std::uint64_t crashes = 0;
  std::uint64_t pauses = 0;
  Duration split_brain{};  // time some shard had two pods believing they led it
  std::vector<Term> terms;
  std::uint64_t terms_dropped = 0;

 private:
  void believe(model::ShardId shard, std::uint32_t pod, bool leading, Time at);
  std::vector<std::vector<std::uint32_t>> believers_;  // per shard: pods that believe they lead
  std::vector<Time> split_since_;                        // per shard, while two or more believe
};

// What a run leaves behind.
struct Figures {
  Metrics metrics;
  std::array<std::uint64_t, kInvariantCount> violations{};
  std::array<std::uint64_t, kDuplicateCauseCount> duplicates{};
  std::uint64_t unresolved = 0;  // committed, not final at the end
  std::uint64_t lost = 0;
  std::uint64_t stuck = 0;
  std::uint64_t stale_writes = 0;
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
constexpr double dups(const Figures& f, DuplicateCause c) { return d(f.duplicates[static_cast<std::size_t>(c)]); }
double latency_quantile_s(const Figures& f, double q);
}  // namespace detail

inline constexpr Metric kOwnMetrics[] = {
    // clang-format off
    {{"operations", Unit::count, "business operations the load made"}, [](const Figures& f, double) { return detail::d(f.metrics.operations); }},
    {{"committed_operations", Unit::count, "business operations committed (with their outbox rows)"}, [](const Figures& f, double) { return detail::d(f.metrics.operation_outcomes[0]); }},
    {{"rolled_back_operations", Unit::count, "business operations whose transaction rolled back (nothing of them may ever be published)"}, [](const Figures& f, double) { return detail::d(f.metrics.operation_outcomes[1]); }},
    {{"unavailable_operations", Unit::count, "business operations refused because their shard failed"}, [](const Figures& f, double) { return detail::d(f.metrics.operation_outcomes[2]); }},
    {{"rejected_operations", Unit::count, "business operations no pod was up to take"}, [](const Figures& f, double) { return detail::d(f.metrics.operation_outcomes[3]); }},
    {{"messages", Unit::count, "outbox messages committed"}, [](const Figures& f, double) { return detail::d(f.metrics.committed); }},
    {{"handled", Unit::count, "messages handled"}, [](const Figures& f, double) { return detail::final_of(f, model::Status::handled); }},
    {{"failed", Unit::count, "messages failed (rejected by the downstream, or out of attempts)"}, [](const Figures& f, double) { return detail::final_of(f, model::Status::failed); }},
    {{"failed_exhausted", Unit::count, "messages failed because their type's attempts ran out"}, [](const Figures& f, double) { return detail::d(f.metrics.final[static_cast<std::size_t>(model::Status::failed)][static_cast<std::size_t>(model::Reason::exhausted)]); }},
    {{"failed_rejected", Unit::count, "messages the downstream refused for good"}, [](const Figures& f, double) { return detail::d(f.metrics.final[static_cast<std::size_t>(model::Status::failed)][static_cast<std::size_t>(model::Reason::rejected)]); }},
    {{"unresolved", Unit::count, "committed messages not final when the run ended"}, [](const Figures& f, double) { return detail::d(f.unresolved); }},
    {{"stuck", Unit::count, "messages still open at the end long after they were due (always O-final violations)"}, [](const Figures& f, double) { return detail::d(f.stuck); }},
    {{"lost", Unit::count, "committed messages missing from their shard"}, [](const Figures& f, double) { return detail::d(f.lost); }},
    {{"handled_rate", Unit::ratio, "handled / messages"}, [](const Figures& f, double) { return detail::ratio(detail::final_of(f, model::Status::handled), detail::d(f.metrics.committed)); }},
    {{"mean_attempts", Unit::number, "attempts per final message, on average"}, [](const Figures& f, double) { return detail::ratio(detail::d(f.metrics.attempts_of_finals), detail::d(f.metrics.finals)); }},
    {{"retries", Unit::count, "handlings that failed and put their message back to pending with a next attempt date"}, [](const Figures& f, double) { return detail::d(f.metrics.retries); }},
    {{"publishes", Unit::count, "produce calls the leaders made (one per partition per scan, repeats included)"}, [](const Figures& f, double) { double s = 0; for (auto v : f.metrics.publishes) s += detail::d(v); return s; }},
    {{"publishes_ambiguous", Unit::count, "produce calls that timed out: written or not, the leader could not tell"}, [](const Figures& f, double) { return detail::d(f.metrics.publishes[static_cast<std::size_t>(model::Produced::timeout)]); }},
    {{"publishes_refused", Unit::count, "produce calls the log refused (certainly not written)"}, [](const Figures& f, double) { return detail::d(f.metrics.publishes[static_cast<std::size_t>(model::Produced::unavailable)]); }},
    {{"records", Unit::count, "records the log wrote (ground truth)"}, [](const Figures& f, double) { return detail::d(f.metrics.records); }},
    {{"duplicate_records", Unit::count, "second and later records of one message for one attempt, all causes"}, [](const Figures& f, double) { double s = 0; for (auto v : f.duplicates) s += detail::d(v); return s; }},
    {{"duplicates_ambiguous", Unit::count, "duplicate records after a publish that timed out but was written"}, [](const Figures& f, double) { return detail::dups(f, DuplicateCause::ambiguous); }},
    {{"duplicates_unmarked", Unit::count, "duplicate records of messages published and then not marked (the mark failed or was fenced out)"}, [](const Figures& f, double) { return detail::dups(f, DuplicateCause::unmarked); }},
    {{"duplicates_new_leader", Unit::count, "duplicate records published by another leader (a leader died or paused between publish and mark)"}, [](const Figures& f, double) { return detail::dups(f, DuplicateCause::new_leader); }},
    {{"duplicates_unexplained", Unit::count, "duplicate records nothing explains (always an O-log violation)"}, [](const Figures& f, double) { return detail::dups(f, DuplicateCause::unexplained); }},
    {{"deliveries", Unit::count, "records the log gave to consumers"}, [](const Figures& f, double) { return detail::d(f.metrics.deliveries); }},
    {{"redeliveries", Unit::count, "records given out again after a rebalance (not committed by their earlier consumer)"}, [](const Figures& f, double) { return detail::d(f.metrics.redeliveries); }},
    {{"relocks_missed", Unit::count, "records whose message had moved on when a consumer re-locked it (let go)"}, [](const Figures& f, double) { return detail::d(f.metrics.relocks[static_cast<std::size_t>(model::Relock::gone)]); }},
    {{"relock_waits", Unit::count, "re-locks that found the message not yet marked and waited"}, [](const Figures& f, double) { return detail::d(f.metrics.relocks[static_cast<std::size_t>(model::Relock::not_yet)]); }},
    {{"handlings", Unit::count, "handlings the consumers started"}, [](const Figures& f, double) { double s = 0; for (auto v : f.metrics.handlings) s += detail::d(v); return s; }},
    {{"handlings_ambiguous", Unit::count, "handlings that timed out: applied or not, the consumer could not tell"}, [](const Figures& f, double) { return detail::d(f.metrics.handlings[static_cast<std::size_t>(model::Handled::timeout)]); }},
    {{"effects", Unit::count, "effects the downstream applied (ground truth)"}, [](const Figures& f, double) { return detail::d(f.metrics.effects); }},
    {{"inbox_dedups", Unit::count, "handlings the downstream's inbox recognised as repeats (nothing applied)"}, [](const Figures& f, double) { return detail::d(f.metrics.inbox_dedups); }},
    {{"handler_deaths", Unit::count, "handlings whose downstream handler died before finishing"}, [](const Figures& f, double) { return detail::d(f.metrics.handler_deaths); }},
    {{"leader_terms", Unit::count, "terms of leadership begun (a pod starting to lead a shard under a new token)"}, [](const Figures& f, double) { return detail::d(f.metrics.leader_terms); }},
    {{"stale_writes", Unit::count, "leader writes the shard's fence kept out (a stale token)"}, [](const Figures& f, double) { return detail::d(f.stale_writes); }},
    {{"split_brain_s", Unit::seconds, "time during which some shard had two pods believing they led it"}, [](const Figures& f, double) { return to_seconds(f.metrics.split_brain); }},
    {{"rescued", Unit::count, "messages the rescuer returned to pending (or failed) after their processing timed out"}, [](const Figures& f, double) { return detail::d(f.metrics.rescued); }},
    {{"rebalances", Unit::count, "consumer-group rebalances"}, [](const Figures& f, double) { return detail::d(f.metrics.rebalances); }},
    {{"evictions", Unit::count, "consumers evicted from the group (late polls, or dead sessions)"}, [](const Figures& f, double) { return detail::d(f.metrics.evictions[0] + f.metrics.evictions[1]); }},
    {{"evictions_slow", Unit::count, "consumers evicted for polling later than the max poll interval"}, [](const Figures& f, double) { return detail::d(f.metrics.evictions[1]); }},
    {{"store_failures", Unit::count, "shard calls that failed, all pods"}, [](const Figures& f, double) { return detail::d(f.metrics.store_failures); }},
    {{"crashes", Unit::count, "pod crashes"}, [](const Figures& f, double) { return detail::d(f.metrics.crashes); }},
    {{"pauses", Unit::count, "pod pauses"}, [](const Figures& f, double) { return detail::d(f.metrics.pauses); }},
    {{"latency_p50_s", Unit::seconds, "commit to handled, median"}, [](const Figures& f, double) { return detail::latency_quantile_s(f, 50); }},
    {{"latency_p99_s", Unit::seconds, "commit to handled, 99th percentile"}, [](const Figures& f, double) { return detail::latency_quantile_s(f, 99); }},
    {{"latency_mean_s", Unit::seconds, "commit to handled, mean (exact)"}, [](const Figures& f, double) { return f.metrics.latency.mean_metric_s(); }},
    {{"latency_p{q}_s", Unit::seconds, "commit to handled, any percentile q in (0, 100]"}, [](const Figures& f, double q) { return detail::latency_quantile_s(f, q); }},
    {{"last_final_s", Unit::seconds, "when the last message became final"}, [](const Figures& f, double) { return to_seconds(f.metrics.last_final_at); }},
    // clang-format on
};
// Then `violations` and one row per invariant, derived from its table (sim/report/violation_metrics.h).
inline constexpr auto kMetrics = with_violation_metrics<kOwnMetrics, kInvariants>();

consteval std::size_t metric(std::string_view name) { return metric_index<kMetrics>(name); }

// The pipeline as `relaysim report` draws it.
inline constexpr Flow kPipeline[] = {
    flow<kMetrics>("services", "outbox tables", "messages"),
    flow<kMetrics>("outbox tables", "log", "records"),
    flow<kMetrics>("log", "consumers", "deliveries"),
    flow<kMetrics>("consumers", "downstream", "effects"),
    flow<kMetrics>("consumers", "handled", "handled"),
    flow<kMetrics>("consumers", "failed", "failed"),
};

// What the time series sees of one window (sim/report/series.h).
// (The counts are every shard's, summed.)
using Sample = WindowSample<Figures, relaysim::outbox::StoreCounts>;

using Series = SeriesOf<Sample, kMetrics>;

// The columns of the time series.
inline constexpr SeriesEntry<Sample> kSeries[] = {
    // clang-format off
    Series::windowed<metric("operations")>(Panel::flow),
    Series::windowed<metric("messages")>(Panel::flow),
    Series::windowed<metric("handled")>(Panel::flow),
    Series::windowed<metric("failed")>(Panel::flow),
    Series::windowed<metric("retries")>(Panel::calls),
    Series::windowed<metric("publishes")>(Panel::calls),
    Series::windowed<metric("publishes_ambiguous")>(Panel::calls),
    Series::windowed<metric("deliveries")>(Panel::calls),
    Series::windowed<metric("redeliveries")>(Panel::calls),
    Series::windowed<metric("effects")>(Panel::flow),
    Series::windowed<metric("inbox_dedups")>(Panel::calls),
    Series::windowed<metric("latency_p50_s")>(Panel::latency),
    Series::windowed<metric("latency_p99_s")>(Panel::latency),
    Series::windowed<metric("latency_mean_s")>(Panel::latency),
    Series::in_status<model::Status::pending>("pending", "outbox rows waiting to be published or retried, every shard, at the window's end"),
    Series::in_status<model::Status::processing>("processing", "outbox rows published and not yet finished, every shard, at the window's end"),
    Series::windowed<metric("leader_terms")>(Panel::health),
    Series::windowed<metric("rescued")>(Panel::health),
    Series::windowed<metric("rebalances")>(Panel::health),
    Series::windowed<metric("store_failures")>(Panel::health),
    Series::windowed<metric("crashes")>(Panel::health),
    // clang-format on
};

}  // namespace relaysim::sim::outbox
