#include "sim/outbox/props/generators.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "model/outbox/consumer.h"
#include "sim/outbox/spec.h"
#include "sim/outbox/world.h"
#include "sim/props/draw.h"
#include "sim/props/faults.h"
#include "sim/system.h"

namespace relaysim::sim::outbox::props {

using namespace std::chrono;
using relaysim::props::draw_crashes;
using relaysim::props::draw_failure;
using relaysim::props::draw_pauses;
using relaysim::props::draw_store_faults;
using relaysim::props::draw_window;
using relaysim::props::ms;
using relaysim::props::percent;
using relaysim::props::sec;

namespace {

// The swarm: which kinds of trouble this case may contain.
enum Feature { kCrash, kPause, kLogOutage, kLostAcks, kDownstreamErrors, kLostAnswers, kDeaths, kDownstreamOutage,
               kSlowPolls, kCoordinatorSlow, kShardFaults, kStoreFaults, kRollbacks, kPerKey, kMarkThenPublish,
               kFewAttempts, kSeveralMessages, kFeatureCount };

// One case, drawn step by step. The steps run in the order `scenarios` calls them, and each one's
// draws in the order written: the draws' order is the case, so the same seed gives the same case.
struct Draw {
  const std::vector<bool>& on;  // the swarm's switches, by Feature
  Scenario& s;
  OutboxSpec& m;
  relaysim::outbox::RelayConfig& p;
  LogSpec& log;
  DownstreamSpec& d;
  Time last_fault{};  // when the last fault or load is over: the heal phase starts after it
  // What the load is paced by (see throughput): how long a wave of a poll's records takes, whether
  // records are handled per key, the messages per second the consumers keep up with, and how long
  // one message of the hottest entity takes.
  Duration wave{};
  bool per_key = false;
  double capacity = 0;
  Duration per_message{};
  Duration queue{};  // how long the hottest entity's queue takes to drain (per-key ordering only)

  Draw(const std::vector<bool>& switches, Scenario& scenario)
      : on(switches), s(scenario), m(spec_of(scenario)), p(m.platform), log(m.log), d(m.downstream) {}

  void fault_ends(Time t) { last_fault = std::max(last_fault, t); }

  void platform() {
    p.pods = *rc::gen::inRange(1U, 5U);
    p.shards = *rc::gen::inRange(1U, 4U);
    p.buckets = p.shards * *rc::gen::inRange(1U, 16U);
    p.lease = sec(2, 15);
    p.renew_every = p.lease / *rc::gen::inRange(2, 5);
    p.scan_every = ms(10, 500);
    p.batch = *rc::gen::element(10U, 100U, 1000U);
    p.order = on[kMarkThenPublish] ? relaysim::outbox::PublishOrder::mark_then_publish
                                   : relaysim::outbox::PublishOrder::publish_then_mark;
    p.publish_timeout = ms(100, 2000);
    p.publish_retries = *rc::gen::inRange(0U, 3U);
    p.concurrency_per_pod = *rc::gen::inRange(2U, 65U);
    p.max_poll_records = *rc::gen::inRange(1U, 200U);
    p.handle_timeout = ms(200, 3000);
    p.relock_wait = ms(0, 3000);
    p.processing_timeout = p.handle_timeout + p.relock_wait + sec(1, 30);
    p.rescue_every = sec(1, 10);
    p.ordering = on[kPerKey] ? relaysim::outbox::Ordering::per_key : relaysim::outbox::Ordering::none;
    p.types.clear();
    for (int k = *rc::gen::inRange(1, 3); k > 0; --k) {
      relaysim::outbox::TypePolicy t;
      t.name = "t" + std::to_string(p.types.size());
      t.backoff.kind = *rc::gen::element(BackoffKind::exponential, BackoffKind::fixed);
      t.backoff.initial = ms(100, 5000);
      t.backoff.multiplier = *rc::gen::element(1.0, 2.0, 3.0);
      t.backoff.max_interval = std::max(t.backoff.initial, sec(1, 30));
      t.backoff.jitter = *rc::gen::element(Jitter::none, Jitter::full, Jitter::equal, Jitter::decorrelated);
      t.max_attempts = static_cast<std::uint16_t>(on[kFewAttempts] ? *rc::gen::inRange(1, 4) : *rc::gen::inRange(4, 12));
      p.types.push_back(std::move(t));
    }
  }

  void message_log() {
    log.partitions = *rc::gen::inRange(1U, 13U);
    log.latency.p50 = ms(1, 20);
    log.latency.p99 = log.latency.p50 * *rc::gen::inRange(1, 6);
    log.session_timeout = sec(2, 15);
    if (on[kLostAcks]) log.lost_acks = percent(1, 20);
    if (on[kLogOutage]) {
      for (int k = *rc::gen::inRange(1, 3); k > 0; --k) {
        Outage o;
        o.window = draw_window({90, 1, 40});
        o.mode = *rc::gen::element(OutageMode::error, OutageMode::timeout);
        log.outages.push_back(o);
        fault_ends(o.window.end());
      }
    }
  }

  void downstream() {
    d.latency.p50 = ms(1, 100);
    d.latency.p99 = d.latency.p50 * *rc::gen::inRange(1, 6);
    if (on[kDownstreamErrors]) {
      d.error_rate = percent(0, 30);
      d.rejection_rate = percent(0, 5);
    }
    if (on[kLostAnswers]) d.lost_answers = percent(1, 10);
    if (on[kDeaths]) d.deaths = percent(1, 10);
    if (on[kDownstreamOutage]) {
      Outage o;
      o.window = draw_window({90, 1, 30});
      o.mode = *rc::gen::element(OutageMode::error, OutageMode::timeout);
      d.outages.push_back(o);
      fault_ends(o.window.end());
    }
    // A pessimistic bound on the consumers (they are pipelined, and do better): a poll's records
    // handled in waves of `concurrency`, each lasting about the downstream's slowest answer, or
    // handle_timeout when one of its answers is lost.
    const std::int64_t waves = (p.max_poll_records + p.concurrency_per_pod - 1) / p.concurrency_per_pod;
    const double lost = std::min(1.0, (d.lost_answers + d.deaths) * std::min(p.concurrency_per_pod, p.max_poll_records));
    wave = d.latency.p99 * 2 + duration_cast<Duration>(p.handle_timeout * lost) + log.latency.p99 * 2;
    if (on[kSlowPolls]) {
      // A downstream so slow that a consumer holds `concurrency` records past max_poll_interval
      // without polling (evictions), which healthy handling keeps well within: once the slowdown
      // is over the group settles.
      log.max_poll_interval = duration_cast<milliseconds>(std::max<Duration>(wave * waves * 4, seconds(1))) + sec(0, 5);
      Slowdown w;
      w.window = draw_window({60, 5, 40});
      w.factor = *rc::gen::element(10.0, 50.0, 200.0);
      d.slowdowns.push_back(w);
      fault_ends(w.window.end());
    }
    if (on[kCoordinatorSlow]) {
      Slowdown w;
      w.window = draw_window({90, 2, 30});
      w.factor = *rc::gen::element(100.0, 1000.0, 5000.0);
      m.coordinator.slowdowns.push_back(w);
      fault_ends(w.window.end());
    }
  }

  void throughput() {
    // The load stays well within what the consumers can handle (one per partition at most), so
    // every backlog drains in the heal phase: messages per second over all segments.
    // With per-key ordering a partition's records are handled one at a time.
    per_key = p.ordering == relaysim::outbox::Ordering::per_key;
    const double parallel = per_key ? log.partitions
                                    : std::min(p.pods, log.partitions) * std::min(p.concurrency_per_pod, p.max_poll_records);
    const Duration one =
        per_key ? d.latency.p99 * 2 + duration_cast<Duration>(p.handle_timeout * (d.lost_answers + d.deaths)) : wave;
    capacity = parallel / std::max(duration<double>(one).count(), 0.001) * (1.0 - d.error_rate);
    // Per-key ordering: an entity's messages go one at a time, the next one scanned only once the
    // one before it is final, so the hottest entity drains one message per `per_message`: a scan,
    // the publish and the handling — and each failed attempt costs its backoff or, for a record let
    // go or an answer lost, the rescuer's timeout. Under publish_then_mark a consumer that gives up
    // sooner than its leader's mark can land lets the record go: with a relock_wait that short any
    // attempt may end that way, so every message may take all of its attempts. The load keeps the
    // hottest entity's queue within a few minutes of draining, and the heal phase waits for it.
    const bool marks_late = p.order == relaysim::outbox::PublishOrder::publish_then_mark &&
                            p.relock_wait < log.latency.p99 * 2 + relaysim::outbox::Consumer::kRelockEvery;
    Duration longest_backoff{};
    std::int64_t most_attempts = 1;
    for (const relaysim::outbox::TypePolicy& t : p.types) {
      longest_backoff = std::max(longest_backoff, t.backoff.max_interval);
      most_attempts = std::max<std::int64_t>(most_attempts, t.max_attempts);
    }
    const Duration attempt = p.scan_every + log.latency.p99 * 2 + d.latency.p99 * 2;
    const Duration failure = p.publish_timeout * static_cast<std::int64_t>(p.publish_retries + 1) + p.processing_timeout +
                             p.rescue_every + longest_backoff;
    const double fails = std::min(0.75, log.lost_acks + d.lost_answers + d.deaths + d.error_rate);
    per_message = marks_late ? (attempt + failure) * most_attempts
                             : duration_cast<Duration>((attempt + failure * fails) * (2 / (1 - fails)));
  }

  void load() {
    constexpr Duration kQueueMost = minutes(5);  // the most the hottest entity's queue may take to drain
    double hottest = 0;  // messages expected on the hottest entity, over all segments
    for (int k = *rc::gen::inRange(1, 3); k > 0; --k) {
      LoadSegment l;
      l.messages = on[kSeveralMessages] ? *rc::gen::inRange(1U, 5U) : 1U;
      const double most = std::clamp(capacity / 8 / l.messages, 1.0, 40.0);
      l.arrivals.rate_per_s = *rc::gen::inRange(1, static_cast<int>(most) + 1);
      l.arrivals.from = Time{} + sec(0, 30);
      l.arrivals.to = l.arrivals.from + sec(5, 90);
      l.keys = static_cast<std::uint64_t>(*rc::gen::element(1, 5, 50, 1000, 100000));
      l.skew = *rc::gen::element(0.0, 0.8, 1.2);
      l.type = *rc::gen::inRange<std::uint32_t>(0, static_cast<std::uint32_t>(p.types.size()));
      l.type_name = p.types[l.type].name;
      if (on[kRollbacks]) l.rollbacks = percent(1, 30);
      if (per_key) {
        const double hot_per_s = l.arrivals.rate_per_s * l.messages * KeySampler(l.keys, l.skew).hottest_share();
        const double longest_s = duration<double>(kQueueMost).count() / duration<double>(per_message).count() / hot_per_s;
        l.arrivals.to = std::min(l.arrivals.to, l.arrivals.from + std::max<Duration>(
                                                    duration_cast<milliseconds>(duration<double>(longest_s)), seconds(1)));
        hottest += hot_per_s * duration<double>(l.arrivals.to - l.arrivals.from).count();
      }
      fault_ends(l.arrivals.to);
      m.load.push_back(std::move(l));
    }
    queue =
        per_key ? per_message * static_cast<std::int64_t>(std::ceil(hottest + 4 * std::sqrt(hottest) + 2)) : Duration{};
  }

  // The spine's faults: pods crashing and pausing, a shard or the whole store failing.
  void spine_faults() {
    if (on[kCrash]) {
      // Half of them in the middle of a store write — often a leader's mark, after its publish:
      // what leaves duplicate records for the next leader to explain.
      fault_ends(draw_crashes(s, p.pods, {90, 1, 40}, 2, [] { return *rc::gen::arbitrary<bool>(); }));
    }
    if (on[kPause]) {
      // Mostly longer than the lease: the paused leader wakes up believing it still leads.
      fault_ends(draw_pauses(s, p.pods, 90, 2, [&] { return p.lease + sec(-1, 20); }));
    }
    if (on[kShardFaults]) {
      for (int k = *rc::gen::inRange(1, 3); k > 0; --k) {
        ShardFault f;
        f.shard = *rc::gen::inRange(0U, p.shards);
        f.window = draw_window({90, 1, 30});
        f.failure = draw_failure();
        m.shard_faults.push_back(f);
        fault_ends(f.window.end());
      }
      p.store_retry = ms(100, 3000);
    }
    if (on[kStoreFaults]) {
      fault_ends(draw_store_faults(s, {90, 1, 20}));
      p.store_retry = ms(100, 3000);
    }
  }

  void heal() {
    // Heal phase: after the last fault every message can end — a lease moves, the rescuer's
    // timeout passes, and each retry waits its longest backoff.
    Duration retries{};
    for (const relaysim::outbox::TypePolicy& t : p.types) {
      retries = std::max(retries, t.backoff.max_interval * static_cast<std::int64_t>(t.max_attempts) * 2);
    }
    s.duration = (last_fault - Time{}) + p.lease * 3 + p.processing_timeout * 2 + p.rescue_every * 2 +
                 log.session_timeout + retries + queue + minutes(2);
  }
};

}  // namespace

rc::Gen<Scenario> scenarios() {
  return rc::gen::exec([] {
    const auto on = *rc::gen::container<std::vector<bool>>(kFeatureCount, rc::gen::arbitrary<bool>());
    Scenario s;
    s.system = find_system("outbox");
    s.set_spec(std::make_unique<OutboxSpec>());
    s.name = "property-case";
    s.seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
    Draw draw(on, s);
    draw.platform();
    draw.message_log();
    draw.downstream();
    draw.throughput();
    draw.load();
    draw.spine_faults();
    draw.heal();
    return s;
  });
}

}  // namespace relaysim::sim::outbox::props
