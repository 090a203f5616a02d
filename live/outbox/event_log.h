// The outbox relay's event log: what one `relaysim serve` process's model did, and what its log
// client heard Redis's script write, as JSON lines (`serve --events FILE` with `system: outbox`),
// for `relaysim judge` to read back and hand to the simulator's own outbox oracle
// (sim/outbox/oracle.h).
//
// One line per event of the model (every field the oracle's checkers read, and the consumer's
// handlings, polls and store failures besides), times in Unix nanoseconds (the live clock's);
// plus a `started` line when the process starts and a `stopped` line when it has drained. Each
// line is written whole, in one write(2), when the model tells of the event — for a store's or
// Redis's change, after the call returned; a `committed` line when the commit is sent, before
// Redis answers — so a log ends at the last event its process lived to see. Each line carries the
// event's time (`at`) and when it was written (`logged`), by which the judge orders several
// processes' lines.
//
//   {"event":"leader_wrote","pod":1,"at":...,"logged":...,"shard":0,"token":7,"write":"mark",
//    "applied":true,"messages":[{"id":12,"status":"processing","attempt":1,...}]}
//
// The kinds are the model's events (model/outbox/events.h) and the ground truth the oracle reads
// from its log and coordinator (sim/outbox/truth.h, sim/world/coordinator.h), as their answers
// tell it: for each record of a produce the Redis script answered, `appended` (written at an
// offset) or `deduped` (a repeat of the producer session's sequence; `same` when it is the record
// written before); for each offset commit it answered, `commit_answered` (`applied` when the
// member still owned the partition); for each lease etcd granted, `granted`. A call that timed
// out has no answer, so what it did is told of by no line. The record's fields are declared once
// (LogRecord::fields), for writing and for reading.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "live/json_record.h"
#include "model/core/names.h"
#include "model/core/ports.h"
#include "model/outbox/events.h"
#include "sim/outbox/truth.h"

namespace relaysim::live::outbox {

namespace model = relaysim::outbox;

enum class LogKind : std::uint8_t {
  started, stopped, operation, leadership, leader_wrote, published, appended, deduped, relocked, handled, finished,
  consumed, committed, polled, store_failed, granted, commit_answered
};
inline constexpr auto kLogKindNames = names<LogKind>({
    {LogKind::started, "started"}, {LogKind::stopped, "stopped"}, {LogKind::operation, "operation"},
    {LogKind::leadership, "leadership"}, {LogKind::leader_wrote, "leader_wrote"}, {LogKind::published, "published"},
    {LogKind::appended, "appended"}, {LogKind::deduped, "deduped"}, {LogKind::relocked, "relocked"},
    {LogKind::handled, "handled"}, {LogKind::finished, "finished"}, {LogKind::consumed, "consumed"},
    {LogKind::committed, "committed"}, {LogKind::polled, "polled"}, {LogKind::store_failed, "store_failed"},
    {LogKind::granted, "granted"}, {LogKind::commit_answered, "commit_answered"}});
constexpr std::string_view to_string(LogKind k) { return kLogKindNames[k]; }

// A message row as a leader's write or a consumer's re-lock found or left it.
struct LogMessage {
  model::Message row;
  template <class Self, class Io>
  static void fields(Self& m, Io& io) {
    io("id", m.row.id);
    io("type", m.row.type);
    io("key", m.row.key);
    io("bucket", m.row.bucket);
    io("version", m.row.version);
    io("status", m.row.status);
    io("reason", m.row.reason);
    io("attempt", m.row.attempt);
    io("created_at", m.row.created_at);
    io("next_attempt", m.row.next_attempt);
    io("fence", m.row.fence);
  }
};

// A record of the log, as the relay published it.
struct LogEntry {
  model::Record record;
  template <class Self, class Io>
  static void fields(Self& e, Io& io) {
    io("shard", e.record.shard);
    io("id", e.record.id);
    io("attempt", e.record.attempt);
    io("type", e.record.type);
    io("key", e.record.key);
    io("version", e.record.version);
    io("fence", e.record.fence);
    io("created_at", e.record.created_at);
  }
};

// One line of the log: the union of the events' fields (a kind uses some of them).
struct LogRecord {
  LogKind kind = LogKind::started;
  model::PodId pod = 0;
  Time at{};      // the event's own time
  Time logged{};  // when the line was written: after the call it tells of returned
  model::ShardId shard = 0;
  // operation
  model::EntityKey key = 0;
  std::uint64_t version = 0;
  model::RowId first = 0;
  std::vector<std::uint32_t> types;  // one per message the operation wrote
  bool committed = false;
  // leadership, leader_wrote, granted
  model::FenceToken token = 0;
  bool leading = false;
  Time until{};  // granted: when the grant lets the lease go, counted from the ask
  // granted
  std::string lease;
  std::uint64_t holder = 0;
  bool renewed = false;
  model::LeaderWrite write = model::LeaderWrite::fence;
  bool applied = false;  // also finished, commit_answered
  std::vector<LogMessage> messages;  // relocked: the one row as the re-lock found it
  // published, appended, deduped, relocked (the delivery's record), handled, finished
  model::ProducerId producer = 0;
  std::uint32_t partition = 0;  // also consumed, committed, commit_answered
  std::uint64_t sequence = 0;   // published: the first record's
  std::vector<LogEntry> records;
  model::Produced produced = model::Produced::ok;
  std::uint32_t attempt = 0;    // published: 0 for the first try, then its repeats
  std::uint64_t offset = 0;     // appended, relocked (the delivery's), consumed, committed, commit_answered
  bool same = false;            // deduped
  model::Relock relock = model::Relock::locked;
  model::Handled handled = model::Handled::done;
  Time started{};               // handled: when the handling began
  // finished: the message's end, or its retry
  model::Status status = model::Status::handled;
  model::Reason reason = model::Reason::none;
  Time next_attempt{};
  // committed
  std::uint64_t generation = 0;
  // commit_answered
  model::MemberId member = 0;
  // polled
  std::uint32_t count = 0;
  bool evicted = false;
  // store_failed
  StoreFailure failure = StoreFailure::other;

  // Visits the kind's fields of `r` (a LogRecord, const to write, not to read) as
  // io(name, member): the one list both directions use.
  template <class Self, class Io>
  static void fields(Self& r, Io& io);
};

// The line for `r` (no newline).
std::string write_record(const LogRecord& r);
// The reference of the lines, every kind with its fields, as Markdown (docs/live.md).
std::string events_reference();
// Reads one line back; nullopt with `problem` set (naming the field) when it is not a record, or
// when a kind about one record (or one row) names none or several.
std::optional<LogRecord> read_record(std::string_view line, std::string& problem);

// Whether a leader's write, applied, changed `row` as the write's line tells of it: a mark, or a
// scan that marks (mark_then_publish), leaves it processing; a rescue puts it back to pending, or
// fails it. A fence changes no message, and a scan of publish_then_mark reads rows and leaves them
// pending.
bool changed_by(model::LeaderWrite write, const model::Message& row);
// Whether `r` tells of a change of messages its process committed to a shard: a business
// operation committed, a leader's write that changed a row (changed_by), a consumer's finish
// applied.
bool commits_a_change(const LogRecord& r);

// What a run's event logs must be to be the logs of real processes: `relaysim judge` refuses a log
// that fails this, naming the line and the reason, rather than judge it. A process's life runs
// from `started` to `stopped`, or to the next `started` (it was killed); within a life every record
// comes after `started`, no time is before it, each is written no earlier than the one before it,
// and nothing but `started` follows `stopped` (LogLife, live/json_record.h).
class LogChecker {
 public:
  // Starts the next log: one process's, restarted any number of times.
  void next_log() { life_.next_log(); }
  // Checks the current log's next record, read at `where` ("file:line"). Returns why no real
  // process could have written it there; empty when it fits.
  std::string check(const LogRecord& r, const std::string& where);

 private:
  LogLife life_;
};

// The sink that writes a process's log: the model's events and the log client's ground truth.
class EventLogWriter final : public SinkFor<model::OperationDone>,
                             public SinkFor<model::LeadershipChanged>,
                             public SinkFor<model::LeaderWrote>,
                             public SinkFor<model::Published>,
                             public SinkFor<model::Relocked>,
                             public SinkFor<model::HandleDone>,
                             public SinkFor<model::Finished>,
                             public SinkFor<model::Consumed>,
                             public SinkFor<model::OffsetsCommitted>,
                             public SinkFor<model::Polled>,
                             public SinkFor<model::StoreFailed>,
                             public SinkFor<sim::outbox::LogAppended>,
                             public SinkFor<sim::outbox::LogDeduped>,
                             public SinkFor<sim::outbox::GroupCommitted>,
                             public SinkFor<sim::LeaseGranted> {
 public:
  // Appends to `path`, stamping each line with `clock`'s time; throws std::invalid_argument when
  // it cannot be opened. With `crash_after_commit` N, the process kills itself (SIGKILL) in place
  // of logging the Nth change it committed to a shard (commits_a_change): the change is in the
  // shard and no line tells of it, which a kill between a commit and its line leaves, rarely, in a
  // real run. A test's crash point (`serve --crash-after-commit`), so that `relaysim judge` can be
  // shown such a log every time.
  EventLogWriter(const std::string& path, model::PodId pod, const Clock& clock,
                 std::optional<std::uint32_t> crash_after_commit = std::nullopt);

  void started(Time at) { log_.started(at); }
  void stopped(Time at) { log_.stopped(at); }
  // Every line so far reached the file (none was lost to a full disk or an I/O error).
  bool intact() const { return log_.intact(); }

  void on(const model::OperationDone& e) override;
  void on(const model::LeadershipChanged& e) override;
  void on(const model::LeaderWrote& e) override;
  void on(const model::Published& e) override;
  void on(const model::Relocked& e) override;
  void on(const model::HandleDone& e) override;
  void on(const model::Finished& e) override;
  void on(const model::Consumed& e) override;
  void on(const model::OffsetsCommitted& e) override;
  void on(const model::Polled& e) override;
  void on(const model::StoreFailed& e) override;
  void on(const sim::outbox::LogAppended& e) override;
  void on(const sim::outbox::LogDeduped& e) override;
  void on(const sim::outbox::GroupCommitted& e) override;
  void on(const sim::LeaseGranted& e) override;

 private:
  void write(LogRecord& r);

  EventLogFile<LogRecord> log_;
  std::optional<std::uint32_t> crash_after_commit_;  // changes left to log before the crash
};

}  // namespace relaysim::live::outbox
