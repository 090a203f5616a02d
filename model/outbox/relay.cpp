#include "model/outbox/relay.h"

#include <algorithm>
#include <string>

#include "model/core/assert.h"
#include "model/core/mutants.h"
#include "model/outbox/mutants.h"

namespace relaysim::outbox {

namespace {

std::string lease_name(ShardId s) { return "outbox/shard/" + std::to_string(s); }

}  // namespace

Relay::Relay(PodId pod, const RelayConfig& config, const NodePorts& ports)
    : pod_(pod),
      holder_(std::uint64_t{pod} << 32 | (ports.rng.next_u64() >> 32)),
      config_(config),
      ports_(ports),
      shards_(ports.shards.size()) {
  RELAYSIM_ASSERT(pod >= 1, "pods count from 1");
  RELAYSIM_ASSERT(ports.shards.size() == config.shards, "one store per shard");
  for (ShardId s = 0; s < shards_.size(); ++s) shards_[s].id = s;
  for (const TypePolicy& t : config.types) max_attempts_.push_back(t.max_attempts);
}

Relay::~Relay() {
  for (Shard& sh : shards_) {
    for (TimerId t : {sh.renew, sh.lease_end, sh.scan, sh.rescue}) {
      if (t) ports_.timers.cancel(t);
    }
  }
}

void Relay::start() {
  const Time now = ports_.clock.now();
  for (ShardId s = 0; s < shards_.size(); ++s) {
    const bool preferred = s % config_.pods == pod_ - 1;
    shards_[s].renew = ports_.timers.schedule_at(preferred ? now : now + config_.renew_every / 2, [this, s] {
      shards_[s].renew = TimerId{};
      campaign(s);
    });
  }
}

void Relay::stop() {
  stopped_ = true;
  for (Shard& sh : shards_) {
    if (sh.renew) ports_.timers.cancel(sh.renew);
    sh.renew = TimerId{};
    step_down(sh.id);
    // Every shard's, led or not: the coordinator may hold a lease this relay is not using (its
    // fence failed, or it stepped down while renewals still succeeded). Releasing one it does
    // not hold changes nothing.
    ports_.coordinator.release(lease_name(sh.id), holder_);
  }
}

std::uint32_t Relay::cycling() const {
  return static_cast<std::uint32_t>(std::count_if(shards_.begin(), shards_.end(), [](const Shard& sh) { return sh.cycling; }));
}

ProducerId Relay::producer(ShardId s) {
  Shard& sh = shards_[s];
  if (sh.producer == 0) {
    // The planted bug: a fixed producer id per pod and shard, whose sequences start again at 0 in
    // every term, so the log takes them for repeats of what an earlier term wrote.
    sh.producer = planted(mutant::producer_session_reused) ? (ProducerId{1} << 40) + ProducerId{pod_} * 256 + s
                                                           : ports_.log.open_producer();
    sh.next_sequence.assign(ports_.log.partitions(), 0);
  }
  return sh.producer;
}

void Relay::campaign(ShardId s) {
  const Time asked_at = ports_.clock.now();
  ports_.coordinator.acquire(lease_name(s), holder_, config_.lease,
                             [this, s, asked_at](const LeaseGrant& g) { granted(s, asked_at, g); });
  Shard& sh = shards_[s];
  if (!sh.renew) {
    sh.renew = ports_.timers.schedule_at(asked_at + config_.renew_every, [this, s] {
      shards_[s].renew = TimerId{};
      campaign(s);
    });
  }
}

void Relay::granted(ShardId s, Time asked_at, const LeaseGrant& g) {
  Shard& sh = shards_[s];
  const Time now = ports_.clock.now();
  RELAYSIM_ASSERT(!g.granted || g.token != 0, "a grant carries a fencing token (0 means none)");
  if (stopped_) {  // asked for before the stop: given back unused
    if (g.granted) ports_.coordinator.release(lease_name(s), holder_);
    return;
  }
  // The lease counts from when it was asked for: the coordinator may have granted it any time
  // after that.
  const Time until = (planted(mutant::lease_counted_from_answer) ? now : asked_at) + config_.lease;
  if (!g.granted || until <= now) {
    if (sh.leading && (!g.granted || sh.lease_until <= now)) step_down(s);
    return;
  }
  if (sh.leading && g.token == sh.token) {
    sh.lease_until = std::max(sh.lease_until, until);
  } else {
    if (sh.leading) step_down(s);
    // A new term: fence the shard with the new token before anything else.
    bool applied = false;
    try {
      applied = store(s).fence(g.token);
    } catch (const StoreError& e) {
      store_failed(s, e);
      return;  // not leading yet; the next renewal tries again
    }
    ports_.events.emit(LeaderWrote{pod_, s, g.token, LeaderWrite::fence, applied, {}, now});
    if (!applied) return;
    sh.leading = true;
    sh.token = g.token;
    sh.producer = 0;  // a new term publishes in a new session
    sh.lease_until = until;
    ports_.events.emit(LeadershipChanged{pod_, s, g.token, true, now, sh.lease_until});
    schedule_scan(s, now);
    sh.rescue = ports_.timers.schedule_at(now + config_.rescue_every, [this, s] {
      shards_[s].rescue = TimerId{};
      rescue(s);
    });
  }
  if (sh.lease_end) ports_.timers.cancel(sh.lease_end);
  sh.lease_end = ports_.timers.schedule_at(sh.lease_until, [this, s] {
    Shard& x = shards_[s];
    x.lease_end = TimerId{};
    if (x.leading && ports_.clock.now() >= x.lease_until) step_down(s);
  });
}

void Relay::step_down(ShardId s) {
  Shard& sh = shards_[s];
  if (!sh.leading) return;
  sh.leading = false;
  for (TimerId* t : {&sh.scan, &sh.rescue, &sh.lease_end}) {
    if (*t) ports_.timers.cancel(*t);
    *t = TimerId{};
  }
  ports_.events.emit(LeadershipChanged{pod_, s, sh.token, false, ports_.clock.now()});
}

void Relay::schedule_scan(ShardId s, Time at) {
  Shard& sh = shards_[s];
  if (sh.scan) ports_.timers.cancel(sh.scan);
  sh.scan = ports_.timers.schedule_at(std::max(at, sh.store_retry_at), [this, s] {
    shards_[s].scan = TimerId{};
    cycle(s);
  });
}

void Relay::store_failed(ShardId s, const StoreError& e) {
  const Time now = ports_.clock.now();
  shards_[s].store_retry_at = now + config_.store_retry;
  ports_.events.emit(StoreFailed{pod_, s, e.failure(), now});
}

void Relay::cycle(ShardId s) {
  Shard& sh = shards_[s];
  if (!sh.leading || sh.cycling) return;
  const Time now = ports_.clock.now();
  Scan scan;
  scan.token = sh.token;
  scan.now = now;
  scan.due_by = planted(mutant::next_attempt_ignored) ? kTimeNever : now;
  scan.limit = config_.batch;
  scan.ordering = planted(mutant::key_order_ignored) ? Ordering::none : config_.ordering;
  scan.mark = config_.order == PublishOrder::mark_then_publish;
  scan.processing_timeout = config_.processing_timeout;
  bool applied = false;
  try {
    applied = store(s).scan(scan, sh.batch);
  } catch (const StoreError& e) {
    store_failed(s, e);
    schedule_scan(s, now + config_.store_retry);
    return;
  }
  ports_.events.emit(LeaderWrote{pod_, s, sh.token, LeaderWrite::scan, applied, sh.batch, now});
  if (!applied) {
    step_down(s);  // a leader with a larger token has written: this pod's term is over
    return;
  }
  if (sh.batch.empty()) {
    schedule_scan(s, now + config_.scan_every);
    return;
  }
  sh.full = sh.batch.size() >= config_.batch;
  // One produce per partition, each partition's records in scan order.
  const std::uint32_t n = static_cast<std::uint32_t>(sh.batch.size());
  sh.of_record.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) sh.of_record[i] = i;
  std::vector<std::uint32_t>& partition = partition_;
  partition.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) partition[i] = ports_.log.partition_of(sh.batch[i].key);
  std::stable_sort(sh.of_record.begin(), sh.of_record.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return partition[a] < partition[b]; });
  sh.records.resize(n);
  sh.groups.clear();
  for (std::uint32_t i = 0; i < n; ++i) {
    const Message& m = sh.batch[sh.of_record[i]];
    // The attempt the message is processing under once marked: the one it was marked with
    // (mark_then_publish), or the next (publish_then_mark).
    const std::uint16_t attempt = scan.mark ? m.attempt : static_cast<std::uint16_t>(m.attempt + 1);
    sh.records[i] = Record{s, m.id, attempt, m.type, m.key, m.version, sh.token, m.created_at};
    const std::uint32_t p = partition[sh.of_record[i]];
    if (sh.groups.empty() || sh.groups.back().partition != p) sh.groups.push_back(Group{p, i, i, 0, 0, 0, Produced::timeout});
    sh.groups.back().end = i + 1;
  }
  const ProducerId session = producer(s);
  for (Group& g : sh.groups) {
    g.producer = session;
    g.first_sequence = sh.next_sequence[g.partition];
    sh.next_sequence[g.partition] += g.end - g.begin;
  }
  sh.cycling = true;
  sh.outstanding = static_cast<std::uint32_t>(sh.groups.size());
  for (std::uint32_t g = 0; g < sh.groups.size(); ++g) publish(s, g);
}

void Relay::publish(ShardId s, std::uint32_t group) {
  Shard& sh = shards_[s];
  RELAYSIM_ASSERT(group < sh.groups.size(), "a group of the shard's cycle");
  const Group& g = sh.groups[group];
  ports_.log.produce(g.producer, g.partition, std::span<const Record>(sh.records).subspan(g.begin, g.end - g.begin),
                     g.first_sequence, config_.publish_timeout,
                     [this, s, group](Produced outcome) { published(s, group, outcome); });
}

void Relay::published(ShardId s, std::uint32_t group, Produced outcome) {
  Shard& sh = shards_[s];
  RELAYSIM_ASSERT(sh.cycling && group < sh.groups.size(), "an answer for a group of the cycle in progress");
  Group& g = sh.groups[group];
  ports_.events.emit(Published{pod_, s, g.producer, g.partition, g.first_sequence,
                               std::span<const Record>(sh.records).subspan(g.begin, g.end - g.begin), outcome, g.tries,
                               ports_.clock.now()});
  if (outcome == Produced::timeout && g.tries < config_.publish_retries) {
    ++g.tries;
    publish(s, group);  // the same sequences: the log writes them once
    return;
  }
  g.outcome = outcome;
  RELAYSIM_ASSERT(sh.outstanding > 0, "a cycle's publishes are counted");
  if (--sh.outstanding == 0) cycle_done(s);
}

void Relay::cycle_done(ShardId s) {
  Shard& sh = shards_[s];
  const Time now = ports_.clock.now();
  RELAYSIM_ASSERT(sh.cycling && sh.outstanding == 0, "a cycle ends once, when all its publishes are answered");
  sh.cycling = false;
  if (config_.order == PublishOrder::publish_then_mark) {
    // Mark what was certainly published. (The leader does not ask again whether it still leads:
    // its belief may be stale however carefully it asks, and the shard's fence is what keeps a
    // stale leader out.)
    sh.scratch.clear();
    for (const Group& g : sh.groups) {
      if (g.outcome != Produced::ok && !planted(mutant::timeout_taken_as_written)) continue;
      for (std::uint32_t i = g.begin; i < g.end; ++i) sh.scratch.push_back(sh.batch[sh.of_record[i]]);
    }
    if (!sh.scratch.empty()) {
      try {
        const std::optional<std::uint32_t> changed =
            store(s).mark(sh.token, now, config_.processing_timeout, sh.scratch, marked_);
        ports_.events.emit(LeaderWrote{pod_, s, sh.token, LeaderWrite::mark, changed.has_value(), marked_, now});
        if (!changed) {
          step_down(s);
          return;
        }
      } catch (const StoreError& e) {
        store_failed(s, e);  // they stay pending and are published again: duplicate records
      }
    }
  }
  if (!sh.leading) return;
  schedule_scan(s, sh.full ? now : now + config_.scan_every);
}

void Relay::rescue(ShardId s) {
  Shard& sh = shards_[s];
  if (!sh.leading) return;
  const Time now = ports_.clock.now();
  Time next = now + config_.rescue_every;
  if (!planted(mutant::rescuer_never_runs) && now >= sh.store_retry_at) {
    const Time overdue_by = planted(mutant::rescue_early) ? kTimeNever : now;
    const std::span<const std::uint16_t> limits =
        planted(mutant::attempts_never_exhausted) ? std::span<const std::uint16_t>() : std::span<const std::uint16_t>(max_attempts_);
    std::optional<std::uint32_t> rescued;
    bool failed = false;
    try {
      rescued = store(s).rescue(sh.token, now, overdue_by, config_.batch, limits, sh.scratch);
    } catch (const StoreError& e) {
      store_failed(s, e);
      failed = true;
    }
    if (!failed) {
      ports_.events.emit(LeaderWrote{pod_, s, sh.token, LeaderWrite::rescue, rescued.has_value(), sh.scratch, now});
      if (!rescued) {
        step_down(s);
        return;
      }
      if (*rescued >= config_.batch) next = now;  // more are overdue
      if (*rescued > 0 && !sh.cycling) schedule_scan(s, now);
    }
  }
  sh.rescue = ports_.timers.schedule_at(next, [this, s] {
    shards_[s].rescue = TimerId{};
    rescue(s);
  });
}

void Relay::publish_now(std::span<const Record> records) {
  for (const Record& r : records) {
    RELAYSIM_ASSERT(r.shard < shards_.size(), "a record of one of this relay's shards");
    const std::uint32_t p = ports_.log.partition_of(r.key);
    const ProducerId session = producer(r.shard);
    const std::uint64_t seq = shards_[r.shard].next_sequence[p]++;
    ports_.log.produce(session, p, std::span<const Record>(&r, 1), seq, config_.publish_timeout, [](Produced) {});
  }
}

}  // namespace relaysim::outbox
