#include "model/outbox/consumer.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/core/mutants.h"
#include "model/outbox/mutants.h"

namespace relaysim::outbox {

Consumer::Consumer(PodId pod, const RelayConfig& config, const NodePorts& ports)
    : pod_(pod), config_(config), ports_(ports), lanes_(ports.log.partitions()), commit_to_(ports.log.partitions(), 0) {}

Consumer::~Consumer() {
  for (Work& w : work_) {
    if (w.timer) ports_.timers.cancel(w.timer);
  }
  if (member_ != 0) ports_.log.leave(member_);
}

void Consumer::start() {
  member_ = ports_.log.join();
  poll();
}

void Consumer::poll() {
  ports_.log.poll(member_, config_.max_poll_records, kPollWait, [this](const Poll& p) { polled(p); });
}

void Consumer::polled(const Poll& p) {
  const Time now = ports_.clock.now();
  ports_.events.emit(Polled{pod_, static_cast<std::uint32_t>(p.deliveries.size()), p.evicted, now});
  if (p.evicted) {
    member_ = ports_.log.join();  // its partitions went to others; it joins the group again
    poll();
    return;
  }
  if (p.deliveries.empty()) {
    poll();
    return;
  }
  RELAYSIM_ASSERT(remaining_ == 0, "a consumer polls again only when its last poll's records are done");
  generation_ = p.generation;
  work_.resize(p.deliveries.size());
  for (std::size_t i = 0; i < p.deliveries.size(); ++i) work_[i] = Work{p.deliveries[i], {}, {}, Handled::failed, {}, false};
  remaining_ = static_cast<std::uint32_t>(work_.size());
  next_ = 0;
  touched_.clear();
  for (const Work& w : work_) {
    std::uint64_t& to = commit_to_[w.d.partition];
    if (to == 0) touched_.push_back(w.d.partition);
    to = std::max(to, w.d.offset + 1);
  }
  if (planted(mutant::offsets_committed_before_handling)) commit_offsets();
  if (config_.ordering == Ordering::per_key) {
    active_lanes_.clear();
    for (std::uint32_t i = 0; i < work_.size(); ++i) {
      Lane& l = lanes_[work_[i].d.partition];
      if (l.items.empty()) active_lanes_.push_back(work_[i].d.partition);
      l.items.push_back(i);
    }
  }
  pump();
}

void Consumer::pump() {
  // A record can be done at once (its message moved on): done() calls back in here, and the
  // outer call goes round again instead of recursing a poll's length deep.
  if (pumping_) {
    again_ = true;
    return;
  }
  pumping_ = true;
  do {
    again_ = false;
    if (config_.ordering == Ordering::per_key) {
      for (std::size_t i = 0; i < active_lanes_.size() && in_flight_ < config_.concurrency; ++i) {
        Lane& l = lanes_[active_lanes_[i]];
        if (l.busy || l.next >= l.items.size()) continue;
        l.busy = true;
        ++in_flight_;
        begin(l.items[l.next++]);
      }
    } else {
      while (in_flight_ < config_.concurrency && next_ < work_.size()) {
        ++in_flight_;
        begin(static_cast<std::uint32_t>(next_++));
      }
    }
  } while (again_);
  pumping_ = false;
  if (remaining_ == 0 && !work_.empty()) end_poll();
}

void Consumer::end_poll() {
  if (!planted(mutant::offsets_committed_before_handling)) commit_offsets();
  for (std::uint32_t p : active_lanes_) {
    Lane& l = lanes_[p];
    l.items.clear();
    l.next = 0;
    l.busy = false;
  }
  active_lanes_.clear();
  for (std::uint32_t p : touched_) commit_to_[p] = 0;
  touched_.clear();
  work_.clear();
  poll();
}

void Consumer::begin(std::uint32_t w) {
  work_[w].relock_since = ports_.clock.now();
  relock(w);
}

void Consumer::retry_later(std::uint32_t w, void (Consumer::*step)(std::uint32_t), const StoreError& e, ShardId shard) {
  const Time now = ports_.clock.now();
  ports_.events.emit(StoreFailed{pod_, shard, e.failure(), now});
  store_retry_at_ = now + config_.store_retry;
  work_[w].timer = ports_.timers.schedule_at(store_retry_at_, [this, w, step] {
    work_[w].timer = TimerId{};
    (this->*step)(w);
  });
}

void Consumer::relock(std::uint32_t w) {
  Work& work = work_[w];
  const Record& r = work.d.record;
  const Time now = ports_.clock.now();
  Message row;
  Relock outcome;
  try {
    outcome = ports_.shards[r.shard]->relock(r.id, r.attempt, row);
  } catch (const StoreError& e) {
    retry_later(w, &Consumer::relock, e, r.shard);
    return;
  }
  // The planted bug: the row is taken by its id alone, whatever its status and attempt.
  if (planted(mutant::relock_skips_status) && row.id == r.id) outcome = Relock::locked;
  ports_.events.emit(Relocked{pod_, work.d, outcome, row, now});
  if (outcome == Relock::not_yet && now - work.relock_since < config_.relock_wait) {
    work.timer = ports_.timers.schedule_at(now + kRelockEvery, [this, w] {
      work_[w].timer = TimerId{};
      relock(w);
    });
    return;
  }
  if (outcome != Relock::locked) {
    done(w);  // moved on, or never marked: let the record go
    return;
  }
  work.handle_started = now;
  ports_.downstream.handle(r, config_.handle_timeout, [this, w](Handled h) { handled(w, h); });
}

void Consumer::handled(std::uint32_t w, Handled outcome) {
  Work& work = work_[w];
  work.outcome = outcome;
  ports_.events.emit(HandleDone{pod_, work.d.record, outcome, work.handle_started, ports_.clock.now()});
  finish(w);
}

void Consumer::finish(std::uint32_t w) {
  Work& work = work_[w];
  const Record& r = work.d.record;
  const Time now = ports_.clock.now();
  Finish f;
  f.at = now;
  const TypePolicy& type = config_.types[std::min<std::size_t>(r.type, config_.types.size() - 1)];
  switch (work.outcome) {
    case Handled::done:
      f.status = Status::handled;
      break;
    case Handled::rejected:
      f.status = Status::failed;
      f.reason = Reason::rejected;
      break;
    case Handled::failed:
    case Handled::timeout:
      if (r.attempt >= type.max_attempts && !planted(mutant::attempts_never_exhausted)) {
        f.status = Status::failed;
        f.reason = Reason::exhausted;
      } else {
        f.status = Status::pending;
        const Duration previous = r.attempt > 1 ? base_delay(type.backoff, r.attempt - 1u) : type.backoff.initial;
        f.next_attempt = now + next_delay(type.backoff, r.attempt, previous, ports_.rng);
      }
      break;
  }
  bool applied = false;
  try {
    applied = ports_.shards[r.shard]->finish(r.id, r.attempt, f);
  } catch (const StoreError& e) {
    retry_later(w, &Consumer::finish, e, r.shard);
    return;
  }
  ports_.events.emit(Finished{pod_, r, f, applied, now});
  done(w);
}

void Consumer::done(std::uint32_t w) {
  Work& work = work_[w];
  RELAYSIM_ASSERT(!work.done, "a record is done once");
  work.done = true;
  ports_.events.emit(Consumed{pod_, work.d.partition, work.d.offset, ports_.clock.now()});
  --in_flight_;
  if (config_.ordering == Ordering::per_key) lanes_[work.d.partition].busy = false;
  --remaining_;
  pump();
}

void Consumer::commit_offsets() {
  const Time now = ports_.clock.now();
  for (std::uint32_t p : touched_) {
    ports_.log.commit(member_, generation_, p, commit_to_[p]);
    ports_.events.emit(OffsetsCommitted{pod_, generation_, p, commit_to_[p], now});
  }
}

}  // namespace relaysim::outbox
