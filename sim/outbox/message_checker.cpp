#include "sim/outbox/message_checker.h"

#include <algorithm>
#include <string>

#include "model/core/assert.h"
#include "model/resilience/backoff.h"

namespace relaysim::sim::outbox {

using namespace relaysim::outbox;

namespace {

Duration total(const std::vector<Outage>& outages, Time end) {
  Duration d{};
  for (const Outage& o : outages) d += std::min(o.window.end(), end) - std::min(o.window.at, end);
  return d;
}

}  // namespace

MessageChecker::MessageChecker(const Scenario& scenario, Ledger& ledger, Judged judged)
    : spec_(spec_of(scenario)),
      violate_(ledger),
      judged_(judged),
      messages_(spec_.platform.shards),
      committed_in_(spec_.platform.shards, 0) {
  const RelayConfig& c = spec_.platform;
  RELAYSIM_ASSERT(c.shards >= 1, "a relay has shards");
  // Everything a due message may have to wait through before it moves again, faults included.
  const Time end = Time{} + scenario.duration;
  settle_ = c.lease + c.renew_every + c.scan_every + c.rescue_every + c.processing_timeout +
            c.publish_timeout * static_cast<std::int64_t>(c.publish_retries + 1) + c.relock_wait + c.handle_timeout +
            spec_.log.session_timeout + spec_.log.max_poll_interval / 4 + c.store_retry * 4 +
            total(spec_.log.outages, end) + total(spec_.downstream.outages, end) +
            (scenario.oracle.terminal_slack >= Duration::zero() ? scenario.oracle.terminal_slack : std::chrono::minutes(1));
  for (const StoreFault& f : scenario.store_faults) settle_ += std::min(f.window.end(), end) - std::min(f.window.at, end);
  for (const ShardFault& f : spec_.shard_faults) settle_ += std::min(f.window.end(), end) - std::min(f.window.at, end);
  for (const PauseFault& p : scenario.pauses) settle_ += p.length;
  for (const CrashFault& k : scenario.crashes) settle_ += std::min(k.restart_after, scenario.duration);
}

MessageChecker::Tracked* MessageChecker::find(ShardId shard, RowId id) {
  if (shard >= messages_.size() || id == 0 || id > messages_[shard].size()) return nullptr;
  Tracked& t = messages_[shard][id - 1];
  return t.committed ? &t : nullptr;
}

std::uint16_t MessageChecker::max_attempts(std::uint32_t type) const {
  const auto& types = spec_.platform.types;
  RELAYSIM_ASSERT(!types.empty(), "a relay has a message type");
  return types[std::min<std::size_t>(type, types.size() - 1)].max_attempts;
}

void MessageChecker::on(const OperationDone& e) {
  if (!e.committed) return;
  RELAYSIM_ASSERT(e.shard < messages_.size(), "an operation on a shard the relay has");
  auto& shard = messages_[e.shard];
  for (std::uint32_t i = 0; i < e.count(); ++i) {
    const RowId id = e.first + i;
    if (judged_ == Judged::simulation ? id != shard.size() + 1 : id <= shard.size() && shard[id - 1].committed) {
      violate_(Invariant::final, e.at, {e.shard, id},
               judged_ == Judged::simulation
                   ? "committed with id " + std::to_string(id) + ", but the shard's next id is " + std::to_string(shard.size() + 1)
                   : "committed with id " + std::to_string(id) + ", which a message committed before has");
      continue;
    }
    if (id > shard.size()) shard.resize(id - 1);  // live: numbers taken and not (yet) committed
    Tracked t;
    t.key = e.key;
    t.version = e.version;
    t.type = e.types[i];
    t.next_attempt = e.at;
    t.committed = true;
    if (id > shard.size()) {
      shard.push_back(t);
    } else {
      shard[id - 1] = t;
    }
    ++committed_;
    ++committed_in_[e.shard];
    if (spec_.platform.ordering == Ordering::per_key) {
      // In id order (live, a message may be told of after a later one): an entity's messages are
      // in one shard, whose lock of the entity's row numbers them in the order they commit.
      std::deque<std::uint64_t>& open = open_by_key_[e.key];
      const std::uint64_t self = MessageRef{e.shard, id}.packed();
      open.insert(std::upper_bound(open.begin(), open.end(), self), self);
    }
  }
}

void MessageChecker::moved(MessageRef m, Tracked& t, const Message& now, Time at, const char* by) {
  if (is_final(t.status) && (now.status != t.status || now.reason != t.reason)) {
    violate_(Invariant::final, at, m,
             std::string("was ") + std::string(to_string(t.status)) + ", and " + by + " made it " + std::string(to_string(now.status)));
  }
  if (now.status != t.status && !allows(kMessageLifecycle, t.status, now.status)) {
    violate_(Invariant::lifecycle, at, m,
             std::string(by) + " moved it " + std::string(to_string(t.status)) + " -> " + std::string(to_string(now.status)) +
                 ", which its lifecycle has no move for");
  }
  if (now.status == Status::processing && now.attempt > max_attempts(t.type)) {
    violate_(Invariant::retry, at, m,
             "attempt " + std::to_string(now.attempt) + " started, but its type allows " + std::to_string(max_attempts(t.type)));
  }
  if (now.status == Status::failed && now.reason == Reason::exhausted && now.attempt < max_attempts(t.type)) {
    violate_(Invariant::retry, at, m,
             "failed as exhausted after " + std::to_string(now.attempt) + " attempts of " + std::to_string(max_attempts(t.type)));
  }
  if (!is_final(t.status) && is_final(now.status)) t.final_at = at;
  t.status = now.status;
  t.reason = now.reason;
  t.attempt = now.attempt;
  t.next_attempt = now.next_attempt;
}

void MessageChecker::on(const LeaderWrote& e) {
  // A write the fence kept out changed nothing; the LeadershipChecker counts it, and judges the
  // token of one that took effect before this.
  if (!e.applied) return;
  RELAYSIM_ASSERT(e.shard < messages_.size(), "a write to a shard the relay has");
  for (const Message& m : e.messages) {
    Tracked* t = find(e.shard, m.id);
    const MessageRef ref{e.shard, m.id};
    if (t == nullptr) {
      violate_(Invariant::rollback, e.at, ref, std::string("the leader's ") + std::string(to_string(e.write)) + " returned a message never committed");
      continue;
    }
    switch (e.write) {
      case LeaderWrite::fence:
        break;
      case LeaderWrite::scan:
        if (t->status != Status::pending || t->next_attempt > e.at) {
          violate_(Invariant::retry, e.at, ref,
                   "scanned as due while " + std::string(to_string(t->status)) + " until " + format_time(t->next_attempt));
        }
        if (spec_.platform.ordering == Ordering::per_key) check_key_order(*t, ref, e.at);
        if (m.status == Status::processing) {
          t->unmarked = false;
          moved(ref, *t, m, e.at, "a scan");
        }
        break;
      case LeaderWrite::mark:
        // Marked after its publish: only when the log acknowledged a record of this attempt. A
        // publish that timed out may or may not be in the log; it stays pending and goes again.
        if (m.status == Status::processing && m.attempt > t->acked_attempt) {
          violate_(Invariant::log, e.at, ref,
                   "marked processing under attempt " + std::to_string(m.attempt) +
                       ", though the log acknowledged no publish of that attempt");
        }
        t->unmarked = false;
        moved(ref, *t, m, e.at, "a mark");
        break;
      case LeaderWrite::rescue:
        if (t->status != Status::processing || t->next_attempt > e.at) {
          violate_(Invariant::retry, e.at, ref,
                   "rescued while " + std::string(to_string(t->status)) + ", its processing timing out only at " +
                       format_time(t->next_attempt));
        }
        moved(ref, *t, m, e.at, "the rescuer");
        break;
    }
  }
}

// O-order: with per-key ordering, a message is scanned for publishing only when its entity's
// earlier messages are all final.
void MessageChecker::check_key_order(const Tracked& t, const MessageRef& ref, Time at) {
  const auto it = open_by_key_.find(t.key);
  if (it == open_by_key_.end()) return;
  for (std::uint64_t packed : it->second) {
    if (packed == ref.packed()) break;
    const MessageRef o = MessageRef::unpack(packed);
    const Tracked* earlier = find(o.shard, o.id);
    if (earlier != nullptr && !is_final(earlier->status)) {
      violate_(Invariant::order, at, ref,
               "published while " + Violations::subject(o) + " of its entity is " + std::string(to_string(earlier->status)));
      break;
    }
  }
}

void MessageChecker::on(const Published& e) {
  for (const Record& r : e.records) {
    Tracked* t = find(r.shard, r.id);
    if (t == nullptr) continue;
    // A time-out is ambiguous whether or not its record is in the log yet: one written after the
    // producer gave up makes the next publish of the attempt a duplicate all the same.
    if (e.outcome == Produced::timeout) t->timed_out_attempt = std::max(t->timed_out_attempt, r.attempt);
    if (e.outcome == Produced::ok) t->acked_attempt = std::max(t->acked_attempt, r.attempt);
    if (t->appended_attempt != r.attempt) continue;
    if (e.outcome == Produced::ok) t->unmarked = true;
  }
}

void MessageChecker::on(const LogAppended& e) {
  const Record& r = e.record;
  const MessageRef ref = r.ref();
  Tracked* t = find(r.shard, r.id);
  if (t == nullptr || !t->committed || t->key != r.key || t->version != r.version) {
    violate_(Invariant::rollback, e.at, ref,
             "the log wrote a record of it (entity " + std::to_string(r.key) + ", version " + std::to_string(r.version) +
                 ") that no committed business transaction made");
    return;
  }
  if (t->appended_attempt == r.attempt) {
    DuplicateCause cause = DuplicateCause::unexplained;
    if (t->appended_fence != r.fence) {
      cause = DuplicateCause::new_leader;
    } else if (t->timed_out_attempt == r.attempt) {
      cause = DuplicateCause::ambiguous;
    } else if (t->unmarked) {
      cause = DuplicateCause::unmarked;
    }
    ++duplicates_[static_cast<std::size_t>(cause)];
    if (cause == DuplicateCause::unexplained) {
      violate_(Invariant::log, e.at, ref,
               "the log holds a second record for attempt " + std::to_string(r.attempt) + " that nothing explains");
    }
  }
  if (r.attempt >= t->appended_attempt) {
    if (r.attempt > t->appended_attempt) {
      t->unmarked = false;
    }
    t->appended_attempt = r.attempt;
    t->appended_fence = r.fence;
  }
}

void MessageChecker::on(const Relocked& e) {
  if (e.outcome != Relock::locked) return;
  const Record& r = e.delivery.record;
  const Tracked* t = find(r.shard, r.id);
  // Live, a re-lock is a read whose line may come after another process's later change of the
  // message (a finish, a rescue): the row it read is the evidence, and the message must have
  // reached the record's attempt.
  const bool held = judged_ == Judged::live
                        ? t != nullptr && e.row.status == Status::processing && e.row.attempt == r.attempt &&
                              t->attempt >= r.attempt
                        : t != nullptr && t->status == Status::processing && t->attempt == r.attempt;
  if (!held) {
    violate_(Invariant::relock, e.at, r.ref(),
             "handled under attempt " + std::to_string(r.attempt) + " while it was " +
                 (t == nullptr ? std::string("never committed")
                               : std::string(to_string(t->status)) + " at attempt " + std::to_string(t->attempt)));
  }
}

void MessageChecker::on(const Finished& e) {
  if (!e.applied) return;
  const Record& r = e.record;
  Tracked* t = find(r.shard, r.id);
  if (t == nullptr) return;
  if (t->status != Status::processing || t->attempt != r.attempt) {
    violate_(Invariant::final, e.at, r.ref(),
             "finished under attempt " + std::to_string(r.attempt) + " while " + std::string(to_string(t->status)) +
                 " at attempt " + std::to_string(t->attempt));
  }
  if (e.finish.status == Status::pending) {
    const TypePolicy& type = spec_.platform.types[std::min<std::size_t>(t->type, spec_.platform.types.size() - 1)];
    // Both sides of the backoff: a retry waits what the policy draws for this attempt, no less
    // and no more (a wait one step too long is as wrong as one too short).
    const Duration wait = e.finish.next_attempt - e.at;
    const Duration least = min_delay(type.backoff, r.attempt);
    const Duration most = max_delay(type.backoff, r.attempt, unrecorded_previous(type.backoff, r.attempt));
    if (wait < least || wait > most) {
      violate_(Invariant::retry, e.at, r.ref(),
               "retry " + std::to_string(r.attempt) + " set for " + format_duration(wait) + " later, outside the backoff's " +
                   format_duration(least) + " to " + format_duration(most));
    }
  }
  Message now;
  now.status = e.finish.status;
  now.reason = e.finish.reason;
  now.attempt = r.attempt;
  now.next_attempt = e.finish.status == Status::pending ? e.finish.next_attempt : t->next_attempt;
  moved(r.ref(), *t, now, e.at, "a consumer");
}

void MessageChecker::on(const EffectApplied& e) {
  const Record& r = e.record;
  Tracked* t = find(r.shard, r.id);
  ++effects_;
  if (t == nullptr) {
    violate_(Invariant::once, e.at, r.ref(), "its effect was applied, but it was never committed");
    return;
  }
  if (++t->effects > 1) {
    violate_(Invariant::once, e.at, r.ref(), "its effect was applied " + std::to_string(t->effects) + " times");
  }
  if (spec_.platform.ordering == Ordering::per_key) {
    auto it = open_by_key_.find(t->key);
    if (it == open_by_key_.end()) return;
    auto& open = it->second;
    const MessageRef self = r.ref();
    // A message no longer on the list was final when the ones before it were: a late effect of
    // it (its handling timed out, and the effect landed after all) breaks no promise of this one.
    const bool listed = std::find(open.begin(), open.end(), self.packed()) != open.end();
    for (std::uint64_t packed : open) {
      if (!listed || packed == self.packed()) break;
      const MessageRef o = MessageRef::unpack(packed);
      const Tracked* earlier = find(o.shard, o.id);
      if (earlier != nullptr && !is_final(earlier->status)) {
        violate_(Invariant::order, e.at, self,
                 "its effect was applied while " + Violations::subject(o) + " of its entity was still " +
                     std::string(to_string(earlier->status)));
        break;
      }
    }
    // Drop the final ones from the front: the list holds only what can still come.
    while (!open.empty()) {
      const MessageRef o = MessageRef::unpack(open.front());
      const Tracked* front = find(o.shard, o.id);
      if (front == nullptr || !is_final(front->status)) break;
      open.pop_front();
    }
  }
}

void MessageChecker::recovered(MessageRef m, const Message& now, Time at) {
  RELAYSIM_ASSERT(judged_ == Judged::live, "only a live run's processes die between a commit and its line");
  Tracked* t = find(m.shard, m.id);
  if (t == nullptr) return;
  if (now.status == Status::processing) t->unmarked = false;
  moved(m, *t, now, at, "a process killed before it logged it");
}

void MessageChecker::held(MessageRef m, const Message& row, Time end) {
  RELAYSIM_ASSERT(judged_ == Judged::live, "a simulated store's rows are the store the checker was told of");
  const Tracked* t = find(m.shard, m.id);
  if (t == nullptr) return;
  // The words are built only for a violation: most rows agree, and a run has many.
  const auto as = [](Status status, Reason reason, std::uint16_t attempt) {
    return std::string(to_string(status)) +
           (status == Status::failed ? " (" + std::string(to_string(reason)) + ")" : std::string()) +
           (status == Status::processing ? " under attempt " : " after attempt ") + std::to_string(attempt);
  };
  if (is_final(t->status)) {
    if (row.status != t->status || row.reason != t->reason || row.attempt != t->attempt) {
      violate_(Invariant::final, end, m,
               "the logs made it " + as(t->status, t->reason, t->attempt) + ", but its shard holds it " +
                   as(row.status, row.reason, row.attempt) + " at the end");
    }
  } else if (row.attempt == t->attempt && row.status != t->status && !allows(kMessageLifecycle, t->status, row.status)) {
    violate_(Invariant::lifecycle, end, m,
             "the logs left it " + as(t->status, t->reason, t->attempt) + ", but its shard holds it " +
                 as(row.status, row.reason, row.attempt) + " at the end: " + std::string(to_string(t->status)) + " -> " +
                 std::string(to_string(row.status)) + " is no move of its lifecycle");
  }
}

void MessageChecker::finish(Time end, std::span<Store* const> shards) {
  RELAYSIM_ASSERT(shards.size() == messages_.size(), "a store for every shard");
  for (ShardId s = 0; s < shards.size(); ++s) {
    const StoreCounts c = shards[s]->counts();
    if (c.messages < committed_in_[s]) {
      lost_ += committed_in_[s] - c.messages;
      violate_(Invariant::final, end, {s, 0},
               std::to_string(committed_in_[s] - c.messages) + " committed messages are missing from shard " +
                   std::to_string(s));
    }
    // per_key: a message may move only once every earlier message of its entity is final, so it
    // is due from the later of its own next attempt and the moment the last of those became final;
    // behind one not final, it is not stuck (the one ahead of it is judged). An entity's messages
    // are all in one shard. (A hot entity's queue drains one message at a time, each through all
    // of its attempts when they fail: that is slow, and no violation.)
    struct Ahead {
      Time final_at{};
      bool open = false;  // an earlier message of the entity is not final
    };
    std::unordered_map<EntityKey, Ahead> ahead;
    const bool per_key = spec_.platform.ordering == Ordering::per_key;
    for (RowId id = 1; id <= messages_[s].size(); ++id) {
      Tracked& t = messages_[s][id - 1];
      if (!t.committed) continue;
      const MessageRef ref{s, id};
      if (t.status == Status::handled && t.effects == 0) {
        violate_(Invariant::once, end, ref, "handled, but its effect was never applied");
      }
      Time due = t.next_attempt;
      bool blocked = false;
      if (per_key) {
        Ahead& a = ahead[t.key];
        blocked = a.open;
        due = std::max(due, a.final_at);
        if (is_final(t.status)) {
          a.final_at = std::max(a.final_at, t.final_at);
        } else {
          a.open = true;
        }
      }
      if (!is_final(t.status) && !blocked && due + settle_ < end) {
        ++stuck_;
        violate_(Invariant::final, end, ref,
                 "still " + std::string(to_string(t.status)) + " at the end, due since " + format_time(due) +
                     (due > t.next_attempt ? " (when the message of its entity before it became final)" : "") +
                     " (more than " + format_duration(settle_) + " before)");
      }
    }
  }
}

}  // namespace relaysim::sim::outbox
