#include "model/outbox/consumer.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/core/mutants.h"
#include "model/outbox/mutants.h"

namespace relaysim::outbox {

Consumer::Consumer(PodId pod, const RelayConfig& config, const NodePorts& ports)
    : pod_(pod), config_(config), ports_(ports), tracks_(ports.log.partitions()), in_flight_(config.concurrency_per_pod) {
  RELAYSIM_ASSERT(!config.types.empty(), "a relay has at least one message type");
}

Consumer::~Consumer() {
  for (std::uint32_t w = 0; w < work_.size(); ++w) {
    if (work_[w].timer) ports_.timers.cancel(work_[w].timer);
  }
  if (member_ != 0) ports_.log.leave(member_);
}

void Consumer::start() {
  member_ = ports_.log.join();
  maybe_poll();
}

void Consumer::stop() {
  if (stopping_) return;
  stopping_ = true;
  drop_waiting();
  leave_if_idle();
}

void Consumer::leave_if_idle() {
  if (!stopping_ || held_ > 0 || member_ == 0) return;
  commit_offsets();
  ports_.log.leave(member_);
  member_ = 0;
}

void Consumer::drop_waiting() {
  const auto drop = [this](std::uint32_t w) {
    work_.release(w);
    --held_;
  };
  for (std::uint32_t w : ready_) drop(w);
  ready_.clear();
  waiting_.clear();
  for (Track& track : tracks_) {
    for (std::uint32_t w : track.lane) drop(w);
    track.lane.clear();
  }
}

void Consumer::maybe_poll() {
  if (stopping_ || polling_ || held_ >= in_flight_.limit()) return;
  if (!planted(mutant::offsets_committed_before_handling)) commit_offsets();
  polling_ = true;
  ports_.log.poll(member_, config_.max_poll_records, kPollWait, [this](const Poll& p) { polled(p); });
}

void Consumer::polled(const Poll& p) {
  const Time now = ports_.clock.now();
  polling_ = false;
  ports_.events.emit(Polled{pod_, static_cast<std::uint32_t>(p.deliveries.size()), p.evicted, now});
  if (stopping_) return;  // what it brings is read again by whoever owns the partitions
  if (p.evicted) {
    reassigned(0);
    member_ = ports_.log.join();  // its partitions went to others; it joins the group again
    maybe_poll();
    return;
  }
  if (p.generation != generation_) reassigned(p.generation);
  for (const Delivery& d : p.deliveries) {
    RELAYSIM_ASSERT(d.partition < tracks_.size(), "a delivery's partition is one of the log's");
    const std::uint32_t w = work_.acquire();
    Track& track = tracks_[d.partition];
    work_[w] = Work{d, generation_, track.next++, {}, {}, Handled::failed, {}};
    track.offsets.push_back(d.offset);
    track.done.push_back(false);
    ++held_;
    if (config_.ordering == Ordering::per_key) {
      if (track.lane.empty() && !track.busy) waiting_.push_back(d.partition);
      track.lane.push_back(w);
    } else {
      ready_.push_back(w);
    }
    // The planted bug: the offset is committed as soon as the record is received.
    if (planted(mutant::offsets_committed_before_handling)) {
      if (track.commit_to == 0) touched_.push_back(d.partition);
      track.commit_to = d.offset + 1;
    }
  }
  if (planted(mutant::offsets_committed_before_handling)) commit_offsets();
  pump();
  maybe_poll();
}

void Consumer::reassigned(std::uint64_t generation) {
  generation_ = generation;
  // Records held and not begun are dropped: whoever owns their partition now reads them again.
  drop_waiting();
  for (Track& track : tracks_) {
    track.offsets.clear();
    track.done.clear();
    track.first = track.next;
    track.commit_to = 0;
  }
  touched_.clear();
}

void Consumer::pump() {
  // A record can be done at once (its message moved on): done() calls back in here, and the
  // outer call goes round again instead of recursing a poll's length deep.
  loop_.run([this] {
    if (config_.ordering == Ordering::per_key) {
      while (in_flight_.has_room() && !waiting_.empty()) {
        const std::uint32_t p = waiting_.back();
        waiting_.pop_back();
        Track& track = tracks_[p];
        if (track.busy || track.lane.empty()) continue;
        const std::uint32_t w = track.lane.front();
        track.lane.pop_front();
        track.busy = true;
        in_flight_.take(ports_.clock.now());
        begin(w);
      }
    } else {
      while (in_flight_.has_room() && !ready_.empty()) {
        const std::uint32_t w = ready_.front();
        ready_.pop_front();
        in_flight_.take(ports_.clock.now());
        begin(w);
      }
    }
  });
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
  if (r.shard >= ports_.shards.size()) {
    // Not this relay's: the topic is shared with another configuration (or one of more shards).
    // Nothing here can re-lock it; it is let go, as a record whose message moved on is.
    done(w);
    return;
  }
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
        const std::uint32_t step = planted(mutant::retry_backoff_one_step_long) ? r.attempt + 1u : r.attempt;
        f.next_attempt = now + next_delay(type.backoff, step, unrecorded_previous(type.backoff, r.attempt), ports_.rng);
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
  RELAYSIM_ASSERT(held_ > 0 && in_flight_.busy() > 0, "a record done was held and in flight");
  const Work& work = work_[w];
  const std::uint32_t p = work.d.partition;
  ports_.events.emit(Consumed{pod_, p, work.d.offset, ports_.clock.now()});
  Track& track = tracks_[p];
  // A record of an earlier assignment counts for no commit: its partition was read again since.
  if (work.generation == generation_ && work.index >= track.first) {
    RELAYSIM_ASSERT(work.index - track.first < track.done.size(), "a record of this assignment is tracked");
    track.done[work.index - track.first] = true;
    std::uint64_t to = 0;
    while (!track.done.empty() && track.done.front()) {
      to = track.offsets.front() + 1;
      track.offsets.pop_front();
      track.done.pop_front();
      ++track.first;
    }
    if (to != 0 && !planted(mutant::offsets_committed_before_handling)) {
      if (track.commit_to == 0) touched_.push_back(p);
      track.commit_to = to;
    }
  }
  if (config_.ordering == Ordering::per_key) {
    track.busy = false;
    if (!track.lane.empty()) waiting_.push_back(p);
  }
  work_.release(w);
  --held_;
  in_flight_.release(ports_.clock.now());
  if (stopping_) {
    leave_if_idle();
    return;
  }
  pump();
  maybe_poll();
}

void Consumer::commit_offsets() {
  const Time now = ports_.clock.now();
  for (std::uint32_t p : touched_) {
    Track& track = tracks_[p];
    ports_.log.commit(member_, generation_, p, track.commit_to);
    ports_.events.emit(OffsetsCommitted{pod_, generation_, p, track.commit_to, now});
    track.commit_to = 0;
  }
  touched_.clear();
}

}  // namespace relaysim::outbox
