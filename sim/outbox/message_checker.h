// MessageChecker: the O-* invariants of the messages themselves, judged on one record per
// committed message: committed, its status, attempt and next attempt, built only from transitions
// the stores reported as applied, with what the log holds of it and how often its effect was
// applied. Each new transition is checked against it.
//
//   O-final      ids committed in order; a finish only of the attempt processing; a final message
//                never changes; nothing lost or stuck at the end
//   O-once       each effect applied at most once, a handled message's exactly once
//   O-retry      no scan before next_attempt, no rescue before the processing timeout, each
//                retry's wait within its backoff, attempts within max_attempts
//   O-order      with per-key ordering, no scan and no effect while an earlier message of the
//                entity is open
//   O-rollback   no record of a message that was not committed
//   O-relock     every handling starts for a message processing under the record's attempt
//   O-log        every duplicate record explained (and counted by cause); a message marked
//                published only after the log acknowledged its record (the log's own side of
//                O-log is the LogChecker's)
//   O-lifecycle  every status change a move of kMessageLifecycle
//
// These stay together because they read one record and one event checks several of them in
// turn: a scan checks O-retry, then O-order, then O-final and O-lifecycle for each message it
// returned; the end of the run O-once and O-final for each message. The effects (O-once) and the
// per-key queues (O-order) read the messages' statuses, which only this checker follows.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/core/events.h"
#include "model/core/names.h"
#include "model/outbox/events.h"
#include "model/outbox/store.h"
#include "sim/oracle/ledger.h"
#include "sim/outbox/spec.h"
#include "sim/outbox/truth.h"
#include "sim/outbox/violations.h"

namespace relaysim::sim::outbox {

// Why the log holds a second record of one message for one attempt.
enum class DuplicateCause : std::uint8_t {
  ambiguous,    // an earlier publish of it timed out: it was written though the relay could not know
  unmarked,     // it was published and then not marked (the mark failed or was fenced out): published again
  new_leader,   // another leader (another fencing token) published it again
  unexplained,  // none of these: an O-log violation
};
inline constexpr auto kDuplicateCauseNames = names<DuplicateCause>({
    {DuplicateCause::ambiguous, "ambiguous"}, {DuplicateCause::unmarked, "unmarked"},
    {DuplicateCause::new_leader, "new_leader"}, {DuplicateCause::unexplained, "unexplained"}});
constexpr std::string_view to_string(DuplicateCause c) { return kDuplicateCauseNames[c]; }
inline constexpr int kDuplicateCauseCount = kDuplicateCauseNames.count;

class MessageChecker final : public SinkFor<relaysim::outbox::OperationDone>,
                             public SinkFor<relaysim::outbox::LeaderWrote>,
                             public SinkFor<relaysim::outbox::Published>,
                             public SinkFor<relaysim::outbox::Relocked>,
                             public SinkFor<relaysim::outbox::Finished>,
                             public SinkFor<LogAppended>,
                             public SinkFor<EffectApplied> {
 public:
  // Judged live, a shard's ids are its store's sequence: they may be committed out of order (two
  // processes' transactions took numbers, and the later committed first) and leave gaps (a
  // transaction that rolled back took one); a simulated store numbers its commits 1, 2, 3...
  MessageChecker(const Scenario& scenario, Ledger& ledger, Judged judged = Judged::simulation);

  void on(const relaysim::outbox::OperationDone& e) override;
  void on(const relaysim::outbox::LeaderWrote& e) override;
  void on(const relaysim::outbox::Published& e) override;
  void on(const relaysim::outbox::Relocked& e) override;
  void on(const relaysim::outbox::Finished& e) override;
  void on(const LogAppended& e) override;
  void on(const EffectApplied& e) override;

  // Live: a change of message `m` no log tells of, which a process killed after committing it
  // never logged. It becomes the message's state at `at`, judged only as a move of its lifecycle
  // and of a final message (O-lifecycle, O-final): the evidence of the rest died with the process.
  void recovered(relaysim::outbox::MessageRef m, const relaysim::outbox::Message& now, Time at);

  // Live: message `m` as its shard holds it at the end of the run, once the judge has taken from
  // it what a killed process committed and never logged (recovered). A message the logs made final
  // must be held as they made it (O-final), and the shard's row must not be at the logs' attempt
  // in a state no move of the lifecycle leads to from theirs (O-lifecycle).
  void held(relaysim::outbox::MessageRef m, const relaysim::outbox::Message& row, Time end);

  // The end-of-run checks: nothing stuck, nothing lost, every handled message's effect applied.
  void finish(Time end, std::span<relaysim::outbox::Store* const> shards);

  std::uint64_t duplicates(DuplicateCause c) const { return duplicates_[static_cast<std::size_t>(c)]; }
  std::uint64_t effects() const { return effects_; }
  std::uint64_t lost() const { return lost_; }
  std::uint64_t stuck() const { return stuck_; }
  std::uint64_t committed() const { return committed_; }

 private:
  using Status = relaysim::outbox::Status;
  struct Tracked {
    relaysim::outbox::EntityKey key = 0;
    std::uint64_t version = 0;
    Time next_attempt{};
    Time final_at{};  // when it became handled or failed
    std::uint32_t type = 0;
    std::uint16_t attempt = 0;
    std::uint16_t appended_attempt = 0;  // the highest attempt the log holds a record of
    std::uint16_t acked_attempt = 0;     // the highest attempt a publish of which the log acknowledged
    std::uint8_t effects = 0;
    Status status = Status::pending;
    relaysim::outbox::Reason reason = relaysim::outbox::Reason::none;
    relaysim::outbox::FenceToken appended_fence = 0;  // of that record
    bool committed = false;
    // The highest attempt a publish of which timed out: its record may be written before the
    // time-out is reported, or after (a write slower than the producer's timeout).
    std::uint16_t timed_out_attempt = 0;
    bool unmarked = false;   // published (acknowledged) for appended_attempt and not marked since
  };

  // The committed message `id` of `shard`; nullptr when none was committed under it.
  Tracked* find(relaysim::outbox::ShardId shard, relaysim::outbox::RowId id);
  std::uint16_t max_attempts(std::uint32_t type) const;
  // A message's status moved as a store reported; checks it could.
  void moved(relaysim::outbox::MessageRef m, Tracked& t, const relaysim::outbox::Message& now, Time at, const char* by);
  void check_key_order(const Tracked& t, const relaysim::outbox::MessageRef& ref, Time at);

  const OutboxSpec& spec_;
  Violations violate_;
  Duration settle_;  // how long a due message may wait before it counts as stuck at the end
  Judged judged_;
  std::vector<std::vector<Tracked>> messages_;  // per shard, by id - 1 (live: with gaps, not committed)
  std::vector<std::uint64_t> committed_in_;     // per shard: how many messages were committed
  // per_key: per entity, its messages not yet final, in id order (packed refs).
  std::unordered_map<relaysim::outbox::EntityKey, std::deque<std::uint64_t>> open_by_key_;
  std::array<std::uint64_t, kDuplicateCauseCount> duplicates_{};
  std::uint64_t effects_ = 0;
  std::uint64_t lost_ = 0;
  std::uint64_t stuck_ = 0;
  std::uint64_t committed_ = 0;
};

}  // namespace relaysim::sim::outbox
