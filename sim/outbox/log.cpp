#include "sim/outbox/log.h"

#include <algorithm>

#include "model/core/assert.h"

namespace relaysim::sim::outbox {

using relaysim::outbox::Delivery;
using relaysim::outbox::Log;
using relaysim::outbox::Poll;
using relaysim::outbox::Produced;

const Schema<LogSpec>& log_schema() {
  static const Schema<LogSpec> schema = [] {
    Schema<LogSpec> s(Style::block, "The partitioned log (Kafka) the relay publishes to and its consumers read from.");
    s.key("partitions", &LogSpec::partitions, integer_codec(LogSpec::kPartitions),
          "partitions of the topic; an entity's records all go to one (by its key)");
    s.key("latency", &LogSpec::latency, latency_codec(), "round-trip latency of a produce, a poll or a commit");
    s.key("lost_acks", &LogSpec::lost_acks, fraction_codec(),
          "share of written produces whose acknowledgement never arrives (the producer times out, though it is written)");
    s.key("outages", &LogSpec::outages, list_codec(map_codec(outage_schema()), "list of windows with a mode"),
          "when the broker refuses produces (`error`) or swallows them (`timeout`)", opt::shown("none"));
    s.key("max_poll_interval", &LogSpec::max_poll_interval, duration_codec(LogSpec::kMaxPollInterval),
          "a consumer that does not poll again within this is evicted; its records go to others");
    s.key("session_timeout", &LogSpec::session_timeout, duration_codec(LogSpec::kSessionTimeout),
          "a consumer whose process died is evicted after this");
    return s;
  }();
  return schema;
}

SimLog::SimLog(const LogSpec& spec, Kernel& kernel, std::uint64_t seed, WorldEvents& events)
    : spec_(spec), kernel_(kernel), latency_(spec.latency), rng_(Rng::derive(seed, "log")), events_(events),
      partitions_(spec.partitions) {
  RELAYSIM_ASSERT(!partitions_.empty(), "a log has partitions");
}

bool SimLog::refuses(Time t) const {
  for (const Outage& o : spec_.outages) {
    if (o.mode == OutageMode::error && o.window.contains(t)) return true;
  }
  return false;
}

bool SimLog::swallows(Time t) const {
  for (const Outage& o : spec_.outages) {
    if (o.mode == OutageMode::timeout && o.window.contains(t)) return true;
  }
  return false;
}

void SimLog::produce(Process& caller, ProducerId producer, std::uint32_t partition, std::span<const Record> records,
                     std::uint64_t first_sequence, Duration timeout, Log::ProduceCallback done) {
  RELAYSIM_ASSERT(partition < partitions_.size() && !records.empty(), "a produce names a partition and has records");
  RELAYSIM_ASSERT(timeout > Duration::zero() && static_cast<bool>(done), "a produce has a timeout and someone to answer");
  const Time now = kernel_.now();
  const Duration round_trip = latency_.sample(rng_);
  Session& session = sessions_[producer << 16 | partition];
  // One connection per session and partition: a later produce never overtakes an earlier one.
  const Time arrives = std::max(now + round_trip / 2, session.last_arrival);
  session.last_arrival = arrives;
  const Time deadline = now + timeout;
  const Time back = arrives + (round_trip - round_trip / 2);
  Produced outcome = Produced::timeout;
  Time answer_at = deadline;
  if (refuses(arrives)) {
    events_.emit(LogRefused{partition, static_cast<std::uint32_t>(records.size()), false, arrives});
    if (back <= deadline) {
      outcome = Produced::unavailable;
      answer_at = back;
    }
  } else if (swallows(arrives)) {
    events_.emit(LogRefused{partition, static_cast<std::uint32_t>(records.size()), true, arrives});
  } else {
    const std::uint32_t slot = produces_.acquire();
    Produce& p = produces_[slot];
    p.records.assign(records.begin(), records.end());
    p.producer = producer;
    p.partition = partition;
    p.first_sequence = first_sequence;
    kernel_.at(arrives, [this, slot] { write(slot); });
    if (back <= deadline && !rng_.chance(spec_.lost_acks)) {
      outcome = Produced::ok;
      answer_at = back;
    }
  }
  caller.at(answer_at, [outcome, done = std::move(done)]() mutable { done(outcome); });
}

void SimLog::write(std::uint32_t slot) {
  Produce& p = produces_[slot];
  Partition& part = partitions_[p.partition];
  Session& session = sessions_[p.producer << 16 | p.partition];
  const Time now = kernel_.now();
  bool wrote = false;
  Session::Batch written;  // this produce's new records (contiguous: one event writes them all)
  for (std::size_t i = 0; i < p.records.size(); ++i) {
    const Record& r = p.records[i];
    const std::uint64_t seq = p.first_sequence + i;
    if (session.any && seq <= session.last) {
      // A repeat: the same record if one of the recent writes put that sequence there. Older
      // than those, a broker cannot tell (Kafka answers OutOfOrderSequence), so it counts as
      // not the same — which the oracle reports, since it is acknowledged and not written.
      bool same = false;
      for (const Session::Batch& b : session.recent) {
        if (b.count == 0 || seq < b.first_seq || seq >= b.first_seq + b.count) continue;
        const std::uint64_t offset = b.first_offset + (seq - b.first_seq);
        RELAYSIM_ASSERT(offset < part.end(), "a recent write's offset is in its partition");
        same = offset < part.base || part.records[offset - part.base] == r;  // below base: read and committed
      }
      events_.emit(LogDeduped{p.partition, r, p.producer, seq, same, now});
      continue;
    }
    const std::uint64_t offset = part.end();
    part.records.push_back(r);
    if (written.count == 0) written = {seq, offset, 0};
    ++written.count;
    session.any = true;
    session.last = seq;
    ++written_;
    wrote = true;
    events_.emit(LogAppended{p.partition, offset, r, p.producer, seq, now});
  }
  if (written.count > 0) {
    session.recent[session.recent_next] = written;
    session.recent_next = (session.recent_next + 1) % 5;
  }
  p.records.clear();
  produces_.release(slot);
  if (!wrote) return;
  const MemberId owner = part.owner;
  if (owner == 0) return;
  RELAYSIM_ASSERT(owner <= members_.size(), "a partition's owner is a member");
  Member& m = members_[owner - 1];
  if (!m.parked) return;
  // A parked poll of the partition's owner takes the new records at once.
  m.parked = false;
  kernel_.cancel(m.wait);
  const std::uint32_t given = answers_.acquire();
  fill(m, m.max, answers_[given]);
  answer(m, *m.caller, m.asked_by, std::move(m.done), false, given);
}

MemberId SimLog::join(std::uint32_t pod) {
  Member m;
  m.id = members_.size() + 1;
  m.pod = pod;
  m.alive = true;
  members_.push_back(std::move(m));
  rebalance();
  return members_.back().id;
}

void SimLog::drop_parked(Member& m) {
  if (!m.parked) return;
  m.parked = false;
  kernel_.cancel(m.wait);
  m.done = {};
}

void SimLog::leave(MemberId member) {
  RELAYSIM_ASSERT(member >= 1 && member <= members_.size(), "a member of the group");
  Member& m = members_[member - 1];
  if (!m.alive) return;
  m.alive = false;
  drop_parked(m);
  rebalance();
}

void SimLog::lost(MemberId member) {
  RELAYSIM_ASSERT(member >= 1 && member <= members_.size(), "a member of the group");
  Member& m = members_[member - 1];
  if (!m.alive) return;
  // A dead process polls no more: its session runs out. A poll it left parked is never answered:
  // its callback belongs to the dead incarnation (an answer scheduled now would reach the next).
  m.dead = true;
  drop_parked(m);
  kernel_.after(spec_.session_timeout, [this, member, polls = m.polls] {
    Member& x = members_[member - 1];
    if (x.alive && x.polls == polls) evict(member, false);
  });
}

void SimLog::evict(MemberId member, bool slow) {
  RELAYSIM_ASSERT(member >= 1 && member <= members_.size(), "a member of the group");
  Member& m = members_[member - 1];
  if (!m.alive) return;
  m.alive = false;
  events_.emit(MemberEvicted{member, m.pod, slow, kernel_.now()});
  if (m.parked) {  // told at once that it is out
    m.parked = false;
    kernel_.cancel(m.wait);
    answer(m, *m.caller, m.asked_by, std::move(m.done), true, answers_.acquire());
  }
  rebalance();
}

void SimLog::rebalance() {
  ++generation_;
  std::vector<MemberId> live;
  for (const Member& m : members_) {
    if (m.alive) live.push_back(m.id);
  }
  for (Member& m : members_) m.partitions.clear();
  for (std::uint32_t p = 0; p < partitions_.size(); ++p) {
    Partition& part = partitions_[p];
    const MemberId owner = live.empty() ? 0 : live[p % live.size()];
    part.owner = owner;
    part.position = std::max(part.committed, part.base);  // given out and not committed: given out again
    if (owner != 0) members_[owner - 1].partitions.push_back(p);
  }
  events_.emit(GroupRebalanced{generation_, static_cast<std::uint32_t>(live.size()), kernel_.now()});
  for (Member& m : members_) {
    if (!m.alive || !m.parked) continue;
    const std::uint32_t answer_slot = answers_.acquire();
    if (fill(m, m.max, answers_[answer_slot])) {
      m.parked = false;
      kernel_.cancel(m.wait);
      answer(m, *m.caller, m.asked_by, std::move(m.done), false, answer_slot);
    } else {
      answers_.release(answer_slot);
    }
  }
}

bool SimLog::fill(Member& m, std::uint32_t max, std::vector<Delivery>& out) {
  RELAYSIM_ASSERT(max > 0, "a poll asks for a record or more");
  out.clear();
  const Time now = kernel_.now();
  // Shared among the member's partitions: each gives up to an equal share, then what is left of
  // `max` goes to them in order. (All from the first partition would leave per_key ordering, which
  // handles a partition's records one at a time, one record in flight through a whole backlog.)
  const std::uint64_t share = std::max<std::uint64_t>(1, max / std::max<std::size_t>(1, m.partitions.size()));
  const auto held = [](const Partition& part) { return part.position < part.end() ? part.end() - part.position : 0; };
  std::int64_t left = max;
  for (std::uint32_t p : m.partitions) left -= static_cast<std::int64_t>(std::min(share, held(partitions_[p])));
  for (std::uint32_t p : m.partitions) {
    Partition& part = partitions_[p];
    const std::uint64_t first = part.position;
    std::uint64_t take = std::min(share, held(part));
    if (left > 0 && take == share) {
      const std::uint64_t more = std::min(held(part) - take, static_cast<std::uint64_t>(left));
      take += more;
      left -= static_cast<std::int64_t>(more);
    }
    std::uint32_t redelivered = 0;
    while (out.size() < max && part.position < first + take) {
      if (part.position < part.delivered_to) ++redelivered;
      out.push_back(Delivery{p, part.position, part.records[part.position - part.base]});
      ++part.position;
    }
    part.delivered_to = std::max(part.delivered_to, part.position);
    if (part.position > first) {
      events_.emit(RecordsDelivered{m.id, m.pod, p, first, static_cast<std::uint32_t>(part.position - first), redelivered, now});
    }
    if (out.size() >= max) break;
  }
  return !out.empty();
}

void SimLog::answer(Member& m, Process& caller, std::uint64_t asked_by, Log::PollCallback done, bool evicted,
                    std::uint32_t slot) {
  const Duration round_trip = latency_.sample(rng_);
  const std::uint64_t generation = generation_;
  static_cast<void>(m);
  if (asked_by != caller.incarnation()) {  // the process that asked has died since
    answers_[slot].clear();
    answers_.release(slot);
    return;
  }
  caller.at(asked_by, kernel_.now() + round_trip / 2, [this, slot, generation, evicted, done = std::move(done)]() mutable {
    done(Poll{generation, evicted, answers_[slot]});
    answers_[slot].clear();
    answers_.release(slot);
  });
}

void SimLog::check_polls(MemberId member, Time at) {
  RELAYSIM_ASSERT(member >= 1 && member <= members_.size(), "a member of the group");
  members_[member - 1].checking = true;
  kernel_.at(at, [this, member] {
    Member& x = members_[member - 1];
    x.checking = false;
    if (!x.alive || x.dead) return;
    const Time now = kernel_.now();
    if (x.parked) {
      check_polls(member, now + spec_.max_poll_interval);  // it is polling
    } else if (x.last_poll + spec_.max_poll_interval > now) {
      check_polls(member, x.last_poll + spec_.max_poll_interval);  // it polled since
    } else {
      evict(member, true);
    }
  });
}

void SimLog::poll(Process& caller, MemberId member, std::uint32_t max_records, Duration wait, Log::PollCallback done) {
  RELAYSIM_ASSERT(member >= 1 && member <= members_.size(), "a member of the group");
  RELAYSIM_ASSERT(static_cast<bool>(done), "a poll has someone to answer");
  Member& m = members_[member - 1];
  RELAYSIM_ASSERT(!m.parked, "one poll at a time per member");
  const std::uint32_t slot = answers_.acquire();
  if (!m.alive) {
    answers_[slot].clear();
    answer(m, caller, caller.incarnation(), std::move(done), true, slot);
    return;
  }
  ++m.polls;
  m.last_poll = kernel_.now();
  if (!m.checking) check_polls(member, m.last_poll + spec_.max_poll_interval);
  if (fill(m, max_records, answers_[slot])) {
    answer(m, caller, caller.incarnation(), std::move(done), false, slot);
    return;
  }
  answers_.release(slot);
  m.parked = true;
  m.caller = &caller;
  m.asked_by = caller.incarnation();
  m.max = max_records;
  m.done = std::move(done);
  m.wait = kernel_.after(wait, [this, member, polls = m.polls] {
    Member& x = members_[member - 1];
    if (!x.parked || x.polls != polls) return;
    x.parked = false;
    const std::uint32_t empty = answers_.acquire();
    answers_[empty].clear();
    answer(x, *x.caller, x.asked_by, std::move(x.done), false, empty);
  });
}

void SimLog::commit(MemberId member, std::uint64_t generation, std::uint32_t partition, std::uint64_t offset) {
  RELAYSIM_ASSERT(member >= 1 && member <= members_.size(), "a member of the group");
  RELAYSIM_ASSERT(partition < partitions_.size(), "a partition of the log");
  const Duration round_trip = latency_.sample(rng_);
  kernel_.after(round_trip / 2, [this, member, generation, partition, offset] {
    Partition& part = partitions_[partition];
    const Member& m = members_[member - 1];
    const bool applied = m.alive && generation == generation_ && part.owner == member;
    if (applied) {
      part.committed = std::max(part.committed, offset);
      // Nobody reads below the committed offset again.
      while (part.base < part.committed && !part.records.empty()) {
        part.records.pop_front();
        ++part.base;
      }
    }
    events_.emit(GroupCommitted{partition, offset, member, applied, kernel_.now()});
  });
}

std::uint64_t SimLog::lag(std::uint32_t partition) const {
  RELAYSIM_ASSERT(partition < partitions_.size(), "a partition of the log");
  const Partition& p = partitions_[partition];
  return p.end() - std::min(p.end(), p.committed);
}

}  // namespace relaysim::sim::outbox
