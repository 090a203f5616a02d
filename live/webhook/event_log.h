// The event log: what one `relaysim serve` process's model did, as JSON lines (`serve --events
// FILE`), for `relaysim judge` to read back and hand to the simulator's own oracle.
//
// One line per model event, with every field the oracle's checkers read, times in Unix
// nanoseconds (the live clock's); plus a `started` line when the process starts and a `stopped`
// line when it has drained. Each line is written whole, in one write(2), as the event happens, so
// a log ends at the last event its process lived to see.
//
//   {"event":"claimed","pod":1,"at":1764133200000000000,"id":12,"deadline_at":...,"token":77}
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
#include "model/core/http.h"
#include "model/core/names.h"
#include "model/resilience/breaker.h"
#include "model/store/sqlite_db.h"
#include "model/webhook/events.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

enum class LogKind : std::uint8_t {
  started, stopped, ingested, claimed, attempt_started, attempt_finished, completed, notified, replayed, lookup, breaker
};
inline constexpr auto kLogKindNames = names<LogKind>({
    {LogKind::started, "started"}, {LogKind::stopped, "stopped"}, {LogKind::ingested, "ingested"},
    {LogKind::claimed, "claimed"}, {LogKind::attempt_started, "attempt_started"},
    {LogKind::attempt_finished, "attempt_finished"}, {LogKind::completed, "completed"}, {LogKind::notified, "notified"},
    {LogKind::replayed, "replayed"}, {LogKind::lookup, "lookup"}, {LogKind::breaker, "breaker"}});
constexpr std::string_view to_string(LogKind k) { return kLogKindNames[k]; }
inline constexpr int kLogKindCount = kLogKindNames.count;

// One line of the log: the union of the events' fields (a kind uses some of them).
struct LogRecord {
  LogKind kind = LogKind::started;
  model::PodId pod = 0;
  Time at{};
  model::RequestId id = 0;
  std::string cxid;
  std::string request_id;
  std::string url;
  model::CreateOutcome outcome = model::CreateOutcome::created;
  Time created_at{};
  Time deadline_at{};
  Time due_at{};
  Time sent_at{};
  model::ClaimToken token = 0;
  std::uint32_t number = 0;  // the attempt's; completed: 0 when the claim made no attempt
  std::uint64_t version = 0;
  NetError error = NetError::none;
  int http_status = 0;
  Duration retry_after{-1};
  model::Status status = model::Status::pending;
  model::Reason reason = model::Reason::none;
  bool applied = false;
  bool failed = false;
  model::ReplayOutcome replay = model::ReplayOutcome::replayed;
  model::LookupStatus lookup = model::LookupStatus::error;
  BreakerState from = BreakerState::closed;
  BreakerState to = BreakerState::closed;
  model::NoticeId notice = 0;  // notified: the notice's id, its request's life, its sends, and when
  std::uint32_t life = 0;      // the request ended so
  std::uint32_t sends = 0;
  Time ended_at{};

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
//     back), and nothing but `started` follows `stopped`;
//   - an attempt is made under a claim the process holds open and has made no attempt under, and
//     finishes once; a completion ends a claim the process holds, naming its token and the number
//     of its attempt (0 for none), after that attempt finished; a tenant's notice is of a failure
//     (failed or dead_lettered) that ended before it, sent at least once;
//   - the breaker moves from the state it is in to another; a lookup is answered after it is sent.
// Across all logs, the database hands out each claim token and each request id once: a token
// claimed twice, or a request created twice, is a record given twice (a log concatenated to
// itself, the same file under two names).
class LogChecker {
 public:
  // Starts the next log: one process's, restarted any number of times.
  void next_log();
  // Checks the current log's next record, read at `where` ("file:line"). Returns why no real
  // process could have written it there; empty when it fits.
  std::string check(const LogRecord& r, const std::string& where);

 private:
  struct Claim {
    model::ClaimToken token = 0;
    Time at{};
    std::uint32_t number = 0;  // its attempt's; 0: none yet
    Time attempt_at{};
    bool finished = false;
  };
  void end_life();
  // Why `r`'s time `t` cannot be (it is before its process started); empty when it can.
  std::string before_start(const LogRecord& r, Time t, const char* what) const;
  template <class Fits>
  Claim* claim_of(model::RequestId id, Fits fits);
  // The checks of one kind of record each, as check() returns them.
  std::string check_create(const LogRecord& r, const std::string& where);
  std::string check_claim(const LogRecord& r, const std::string& where);
  std::string check_attempt_started(const LogRecord& r);
  std::string check_attempt_finished(const LogRecord& r);
  std::string check_completion(const LogRecord& r);

  bool up_ = false;
  Time started_at_{};
  BreakerState breaker_ = BreakerState::closed;
  model::RequestId last_created_ = 0;
  // The claims this process holds open, by request (two, when it claimed a request again after
  // being stalled past its lease).
  std::unordered_map<model::RequestId, std::vector<Claim>> open_;
  // Where each claim token and each created request id was first seen, across all logs.
  std::unordered_map<model::ClaimToken, std::string> tokens_;
  std::unordered_map<model::RequestId, std::string> created_;
};

// The sink that writes a process's log.
class EventLogWriter final : public SinkFor<model::Ingested>,
                             public SinkFor<model::Claimed>,
                             public SinkFor<model::AttemptStarted>,
                             public SinkFor<model::AttemptFinished>,
                             public SinkFor<model::Completed>,
                             public SinkFor<model::TenantNotified>,
                             public SinkFor<model::Replayed>,
                             public SinkFor<model::LookupFinished>,
                             public SinkFor<model::BreakerChanged> {
 public:
  // Appends to `path`; throws std::invalid_argument when it cannot be opened.
  EventLogWriter(const std::string& path, model::PodId pod);
  ~EventLogWriter();
  EventLogWriter(const EventLogWriter&) = delete;
  EventLogWriter& operator=(const EventLogWriter&) = delete;

  void started(Time at);
  void stopped(Time at);
  // From now on, lines of events that happen while `db` holds a group of writes open wait for its
  // commit, and are written together after it (or dropped, when the group is lost): a line must
  // not say what a crash could still take back. A process killed between the commit and the
  // write leaves writes no line tells of; the judge reads those from the database.
  void hold_for(Db& db) { commits_ = &db; }
  // Every line so far reached the file (none was lost to a full disk or an I/O error).
  bool intact() const { return file_.intact(); }

  void on(const model::Ingested& e) override;
  void on(const model::Claimed& e) override;
  void on(const model::AttemptStarted& e) override;
  void on(const model::AttemptFinished& e) override;
  void on(const model::Completed& e) override;
  void on(const model::TenantNotified& e) override;
  void on(const model::Replayed& e) override;
  void on(const model::LookupFinished& e) override;
  void on(const model::BreakerChanged& e) override;

 private:
  void write(const LogRecord& r);

  LineFile file_;
  model::PodId pod_;
  Db* commits_ = nullptr;
  std::string held_;  // lines waiting for the open group's commit
};

}  // namespace relaysim::live::webhook
