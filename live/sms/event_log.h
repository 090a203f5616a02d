// The SMS gateway's event log: what one `relaysim serve` process's model did, as JSON lines
// (`serve --events FILE` with `system: sms`), for `relaysim judge` to read back and hand to the
// simulator's own SMS oracle (sim/sms/oracle.h).
//
// One line per model event the oracle's checkers read, with every field they read, times in Unix
// nanoseconds (the live clock's); plus a `started` line when the process starts and a `stopped`
// line when it has drained. Each line is written whole, in one write(2), after the store call it
// tells of returned, so a log ends at the last event its process lived to see. Each line carries
// the event's time (`at`: when the model decided, which for a store change is before the
// database's lock was taken) and when it was written (`logged`: after the change committed), by
// which the judge puts several processes' lines in the database's order.
//
//   {"event":"claimed","pod":1,"at":1764133200000000000,"id":12,"token":77,"prior":"pending",...}
//
// The record's fields are declared once (LogRecord::fields), for writing and for reading.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "live/json_record.h"
#include "model/core/names.h"
#include "model/core/ports.h"
#include "model/sms/events.h"

namespace relaysim::live::sms {

namespace model = relaysim::sms;

enum class LogKind : std::uint8_t {
  started, stopped, accepted, claimed, limit, cap, submit_started, submit_finished, completed, mode, receipt
};
inline constexpr auto kLogKindNames = names<LogKind>({
    {LogKind::started, "started"}, {LogKind::stopped, "stopped"}, {LogKind::accepted, "accepted"},
    {LogKind::claimed, "claimed"}, {LogKind::limit, "limit"}, {LogKind::cap, "cap"},
    {LogKind::submit_started, "submit_started"},
    {LogKind::submit_finished, "submit_finished"}, {LogKind::completed, "completed"}, {LogKind::mode, "mode"},
    {LogKind::receipt, "receipt"}});
constexpr std::string_view to_string(LogKind k) { return kLogKindNames[k]; }

// One message of an accepted record, as its request named it.
struct LogMessage {
  std::string biz_type;
  std::string biz_id;
  Time send_at{};
  template <class Self, class Io>
  static void fields(Self& m, Io& io) {
    io("biz_type", m.biz_type);
    io("biz_id", m.biz_id);
    io("send_at", m.send_at);
  }
};

// One line of the log: the union of the events' fields (a kind uses some of them).
struct LogRecord {
  LogKind kind = LogKind::started;
  model::PodId pod = 0;
  Time at{};      // when the model decided (the event's own time)
  Time logged{};  // when the line was written: after the store call it tells of committed
  model::MessageId id = 0;  // accepted: the first message's (the original's, for a duplicate)
  // accepted
  model::BusinessId business = 0;  // limit: 0 for the cluster's limit
  std::uint64_t epoch = 0;
  std::uint32_t period = 0;
  model::SendPath path = model::SendPath::async;  // also submit_started, submit_finished
  model::AcceptOutcome outcome = model::AcceptOutcome::accepted;
  std::vector<LogMessage> messages;
  // claimed, cap, submit_started, submit_finished, completed: the claim's token
  model::ClaimToken token = 0;
  model::Status prior = model::Status::pending;
  model::ProviderId provider = model::kNoProvider;
  bool provider_accepted = false;  // claimed: a provider certainly accepted it before
  model::Kind message_kind = model::Kind::single;
  model::Recipient recipient = 0;  // also cap
  // limit
  std::uint64_t member = 0;
  LimitVia via = LimitVia::store;
  bool admitted = false;
  // submit_started, submit_finished
  std::uint16_t attempt = 0;
  model::SubmitClass submit = model::SubmitClass::accepted;
  Duration latency{};
  model::Step step = model::Step::fail;
  Time due_at{};  // submit_finished: the decision's; completed: the completion's
  // completed; accepted: a duplicate's original's status now
  model::Status status = model::Status::pending;
  model::Reason reason = model::Reason::none;
  std::uint16_t attempts = 0;
  bool applied = false;
  bool failed = false;
  // mode
  model::AsyncRule rule = model::AsyncRule::none;
  bool entered = false;
  // receipt
  bool delivered = false;
  model::ReceiptOutcome receipt = model::ReceiptOutcome::applied;

  // Visits the kind's fields of `r` (a LogRecord, const to write, not to read) as
  // io(name, member): the one list both directions use.
  template <class Self, class Io>
  static void fields(Self& r, Io& io);
};

// The line for `r` (no newline).
std::string write_record(const LogRecord& r);
// Reads one line back; nullopt with `problem` set (naming the field) when it is not a record.
std::optional<LogRecord> read_record(std::string_view line, std::string& problem);

// What a run's event logs must be to be the logs of real processes: `relaysim judge` refuses a log
// that fails this, naming the line and the reason, rather than judge it. Records are checked in
// the order written, log by log. A process's life runs from `started` to `stopped`, or to the
// next `started` (it was killed); within a life
//   - every record comes after `started` and no time is before it (one clock, which never goes
//     back), each is written no earlier than the one before it, and nothing but `started`
//     follows `stopped` (LogLife, live/json_record.h); a limit's decisions come in time order;
//   - a cap's place is taken and a submit starts under a claim the process holds, and a
//     completion ends a claim it holds;
//   - its accepted messages' ids only grow (the database hands them out in commit order, and a
//     process logs an accept after its commit), lives of one log together.
// Across all logs, the database hands out each claim token and each message id once: a token
// claimed twice, or a message accepted twice, is a record given twice (a log concatenated to
// itself, the same file under two names).
class LogChecker {
 public:
  // Starts the next log: one process's, restarted any number of times.
  void next_log();
  // Checks the current log's next record, read at `where` ("file:line"). Returns why no real
  // process could have written it there; empty when it fits.
  std::string check(const LogRecord& r, const std::string& where);

 private:
  LogLife life_;
  model::MessageId last_accepted_ = 0;  // this log's
  Time last_limit_{};
  // The claims this process holds, by token, to the message claimed.
  std::unordered_map<model::ClaimToken, model::MessageId> held_;
  // Where each claim token and each accepted message id was first seen, across all logs.
  std::unordered_map<model::ClaimToken, std::string> tokens_;
  std::unordered_map<model::MessageId, std::string> accepted_;
};

// The sink that writes a process's log.
class EventLogWriter final : public SinkFor<model::Accepted>,
                             public SinkFor<model::Claimed>,
                             public SinkFor<model::LimitDecided>,
                             public SinkFor<model::CapTaken>,
                             public SinkFor<model::SubmitStarted>,
                             public SinkFor<model::SubmitFinished>,
                             public SinkFor<model::Completed>,
                             public SinkFor<model::ModeChanged>,
                             public SinkFor<model::ReceiptReceived> {
 public:
  // Appends to `path`, stamping each line with `clock`'s time; throws std::invalid_argument when
  // it cannot be opened.
  EventLogWriter(const std::string& path, model::PodId pod, const Clock& clock);

  void started(Time at) { log_.started(at); }
  void stopped(Time at) { log_.stopped(at); }
  // Every line so far reached the file (none was lost to a full disk or an I/O error).
  bool intact() const { return log_.intact(); }

  void on(const model::Accepted& e) override;
  void on(const model::Claimed& e) override;
  void on(const model::LimitDecided& e) override;
  void on(const model::CapTaken& e) override;
  void on(const model::SubmitStarted& e) override;
  void on(const model::SubmitFinished& e) override;
  void on(const model::Completed& e) override;
  void on(const model::ModeChanged& e) override;
  void on(const model::ReceiptReceived& e) override;

 private:
  EventLogFile<LogRecord> log_;
};

}  // namespace relaysim::live::sms
