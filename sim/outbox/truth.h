// Ground truth of an outbox world: what the log really wrote and delivered, and which effects the
// downstream really applied — including what the relay cannot see (a record written though its
// acknowledgement was lost, an effect applied though its answer never came). The oracle judges
// the relay against these events; the metrics count them.
#pragma once

#include <cstdint>

#include "model/core/events.h"
#include "model/outbox/ports.h"
#include "model/outbox/types.h"
#include "sim/world/coordinator.h"

namespace relaysim::sim::outbox {

using relaysim::outbox::MemberId;
using relaysim::outbox::ProducerId;
using relaysim::outbox::Record;

// The log wrote a record at `offset` of `partition`.
struct LogAppended {
  std::uint32_t partition;
  std::uint64_t offset;
  const Record& record;
  ProducerId producer;
  std::uint64_t sequence;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(70);
    fp.mix(static_cast<std::uint64_t>(partition) << 48 ^ offset);
    fp.mix(record.ref().packed() << 16 ^ record.attempt);
  }
};

// The log took a produced record for a repeat of a sequence its producer session had written,
// and acknowledged it without writing it. `same`: the record written under that sequence is this
// one (a retry); otherwise the log dropped a record it never wrote.
struct LogDeduped {
  std::uint32_t partition;
  const Record& record;
  ProducerId producer;
  std::uint64_t sequence;
  bool same;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(71);
    fp.mix(record.ref().packed() << 1 ^ (same ? 1U : 0U));
  }
};

// A produce reached the log while it was down: refused (`error`) or swallowed (`timeout`).
struct LogRefused {
  std::uint32_t partition;
  std::uint32_t records;
  bool swallowed;
  Time at;
};

// The log gave `count` records of `partition` from `first` to a member's poll; `redelivered` of
// them had been given out before (after a rebalance, to this member or another).
struct RecordsDelivered {
  MemberId member;
  std::uint32_t pod;
  std::uint32_t partition;
  std::uint64_t first;
  std::uint32_t count;
  std::uint32_t redelivered;
  Time at;
};

struct GroupRebalanced {
  std::uint64_t generation;
  std::uint32_t members;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(72);
    fp.mix(generation << 16 ^ members);
  }
};

// A member left the group against its will: it polled too late (`slow`), or its process died and
// its session ran out.
struct MemberEvicted {
  MemberId member;
  std::uint32_t pod;
  bool slow;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(73);
    fp.mix(member << 1 ^ (slow ? 1U : 0U));
  }
};

// An offset commit reached the log: applied when the member still held the partition.
struct GroupCommitted {
  std::uint32_t partition;
  std::uint64_t offset;
  MemberId member;
  bool applied;
  Time at;
};

// The downstream applied a message's effect (committed it), called by `pod`.
struct EffectApplied {
  const Record& record;
  std::uint32_t pod;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(74);
    fp.mix(record.ref().packed() << 16 ^ record.attempt);
  }
};

// The downstream's inbox held the message already: nothing applied.
struct EffectDeduped {
  const Record& record;
  std::uint32_t pod;
  Time at;
};

// The downstream's handler died after writing the effect and before it finished.
struct HandlerDied {
  const Record& record;
  Time at;
};

// A business operation the load made, and how it went (no pod up: `pod` is UINT32_MAX).
struct OperationCalled {
  std::uint32_t pod;
  relaysim::outbox::EntityKey key;
  std::uint8_t outcome;  // relaysim::outbox::OperationOutcome; 255: no pod was up
  Time at;
};

using WorldEvents = EventBus<OperationCalled, LogAppended, LogDeduped, LogRefused, RecordsDelivered, GroupRebalanced, MemberEvicted,
                             GroupCommitted, EffectApplied, EffectDeduped, HandlerDied>;

}  // namespace relaysim::sim::outbox
