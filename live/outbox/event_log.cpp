#include "live/outbox/event_log.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include "model/core/assert.h"

namespace relaysim::live::outbox {

namespace {

// The names of each enum a record writes by name (model/core/names.h).
struct Names {
  template <class E>
  static constexpr const auto& of() {
    if constexpr (std::is_same_v<E, LogKind>) return kLogKindNames;
    if constexpr (std::is_same_v<E, model::Status>) return model::kStatusNames;
    if constexpr (std::is_same_v<E, model::Reason>) return model::kReasonNames;
    if constexpr (std::is_same_v<E, model::LeaderWrite>) return model::kLeaderWriteNames;
    if constexpr (std::is_same_v<E, model::Produced>) return model::kProducedNames;
    if constexpr (std::is_same_v<E, model::Relock>) return model::kRelockNames;
    if constexpr (std::is_same_v<E, model::Handled>) return model::kHandledNames;
    if constexpr (std::is_same_v<E, StoreFailure>) return kStoreFailureNames;
  }
};

// The entries of a relocked, handled or finished record: the one record it is about.
LogEntry entry(const model::Record& r) { return LogEntry{r}; }

}  // namespace

template <class Self, class Io>
void LogRecord::fields(Self& r, Io& io) {
  io("pod", r.pod);
  io("at", r.at);
  io("logged", r.logged);
  switch (r.kind) {
    case LogKind::started:
    case LogKind::stopped:
      return;
    case LogKind::operation:
      io("shard", r.shard);
      io("key", r.key);
      io("version", r.version);
      io("first", r.first);
      io("types", r.types);
      io("committed", r.committed);
      return;
    case LogKind::leadership:
      io("shard", r.shard);
      io("token", r.token);
      io("leading", r.leading);
      io("until", r.until);
      return;
    case LogKind::leader_wrote:
      io("shard", r.shard);
      io("token", r.token);
      io("write", r.write);
      io("applied", r.applied);
      io("messages", r.messages);
      return;
    case LogKind::published:
      io("shard", r.shard);
      io("producer", r.producer);
      io("partition", r.partition);
      io("sequence", r.sequence);
      io("records", r.records);
      io("produced", r.produced);
      io("attempt", r.attempt);
      return;
    case LogKind::appended:
      io("partition", r.partition);
      io("offset", r.offset);
      io("producer", r.producer);
      io("sequence", r.sequence);
      io("records", r.records);
      return;
    case LogKind::deduped:
      io("partition", r.partition);
      io("producer", r.producer);
      io("sequence", r.sequence);
      io("same", r.same);
      io("records", r.records);
      return;
    case LogKind::relocked:
      io("partition", r.partition);
      io("offset", r.offset);
      io("records", r.records);
      io("relock", r.relock);
      io("messages", r.messages);
      return;
    case LogKind::handled:
      io("records", r.records);
      io("handled", r.handled);
      io("started", r.started);
      return;
    case LogKind::finished:
      io("records", r.records);
      io("status", r.status);
      io("reason", r.reason);
      io("next_attempt", r.next_attempt);
      io("applied", r.applied);
      return;
    case LogKind::consumed:
      io("partition", r.partition);
      io("offset", r.offset);
      return;
    case LogKind::committed:
      io("generation", r.generation);
      io("partition", r.partition);
      io("offset", r.offset);
      return;
    case LogKind::polled:
      io("count", r.count);
      io("evicted", r.evicted);
      return;
    case LogKind::store_failed:
      io("shard", r.shard);
      io("failure", r.failure);
      return;
    case LogKind::granted:
      io("lease", r.lease);
      io("holder", r.holder);
      io("token", r.token);
      io("renewed", r.renewed);
      io("until", r.until);
      return;
    case LogKind::commit_answered:
      io("member", r.member);
      io("partition", r.partition);
      io("offset", r.offset);
      io("applied", r.applied);
      return;
  }
}

std::string write_record(const LogRecord& r) { return write_event_line<Names>(r); }

namespace {

// What a line of each kind tells, for the reference (docs/live.md).
constexpr std::string_view what(LogKind k) {
  switch (k) {
    case LogKind::started: return "the process started";
    case LogKind::stopped: return "it drained and is about to exit";
    case LogKind::operation: return "a business operation committed or rolled back (`first`: its first message's id; `types`: one per message)";
    case LogKind::leadership: return "the pod started or stopped believing it leads a shard (`until`: the lease's end as the pod counts it)";
    case LogKind::leader_wrote: return "a leader's write (`fence`, `scan`, `mark`, `rescue`) reached its shard, `applied` or fenced out; `messages`: the rows it read or changed";
    case LogKind::published: return "a produce was answered (`ok`, `unavailable`, `timeout`); `sequence`: the first record's, `attempt`: 0, then its repeats";
    case LogKind::appended: return "Redis's script wrote the record at `offset`";
    case LogKind::deduped: return "Redis's script took the record for a repeat of its producer's `sequence` (`same`: of the record written before)";
    case LogKind::relocked: return "a consumer re-locked a delivery's message (`locked`, `not_yet`, `gone`); `messages`: the row as found";
    case LogKind::handled: return "the downstream's answer, as `classify_handled` read it (`done`, `failed`, `rejected`, `timeout`); `started`: when the handling began";
    case LogKind::finished: return "the consumer ended the message, or set its retry; `applied`: it was still processing under that attempt";
    case LogKind::consumed: return "the consumer is done with a delivery";
    case LogKind::committed: return "the consumer sent its group's offset of a partition (written before Redis answers)";
    case LogKind::polled: return "a poll came back";
    case LogKind::store_failed: return "a shard's database failed a call";
    case LogKind::granted: return "etcd granted (or renewed) a lease, as its answer told: `token` is the key's create revision, `until` the ask's moment plus the lease (no later than etcd lets it go)";
    case LogKind::commit_answered: return "Redis's script answered an offset commit: `applied` when the member still owned the partition in its generation";
  }
  return {};
}

// The names of a kind's fields, in the order they are visited.
struct FieldNames {
  std::vector<std::string_view> names;
  template <class T>
  void operator()(const char* name, const T&) {
    names.emplace_back(name);
  }
};

}  // namespace

std::string events_reference() {
  std::string out =
      "#### The outbox relay's event log (`serve --events`, `system: outbox`)\n\n"
      "Each line is a JSON object with `event` (the kind), `pod`, `at` (the event's own time) and `logged` (when the line "
      "was written), both Unix nanoseconds, and the kind's fields:\n\n"
      "| `event` | what | fields |\n|---|---|---|\n";
  for (int k = 0; k < kLogKindNames.count; ++k) {
    LogRecord r;
    r.kind = static_cast<LogKind>(k);
    FieldNames fields;
    LogRecord::fields(std::as_const(r), fields);
    std::string list;
    for (const std::string_view name : fields.names) {
      if (name == "pod" || name == "at" || name == "logged") continue;
      list += (list.empty() ? "`" : ", `") + std::string(name) + "`";
    }
    out += "| `" + std::string(to_string(r.kind)) + "` | " + std::string(what(r.kind)) + " | " + (list.empty() ? "none" : list) +
           " |\n";
  }
  const auto object = [](const auto& item) {
    FieldNames fields;
    std::remove_cvref_t<decltype(item)>::fields(item, fields);
    std::string text;
    for (const std::string_view name : fields.names) text += (text.empty() ? "`{\"" : ", \"") + std::string(name) + "\"";
    return text + "}`";
  };
  out += "\nA row of `messages` is " + object(LogMessage{}) + " and a record of `records` " + object(LogEntry{}) +
         " (a message's type by its index in `platform.types`).\n";
  return out;
}

std::optional<LogRecord> read_record(std::string_view line, std::string& problem) {
  std::optional<LogRecord> r = read_event_line<Names, LogRecord>(line, problem);
  if (!r) return r;
  // The kinds about one record, or one row, carry exactly that one.
  const bool one_record = r->kind == LogKind::appended || r->kind == LogKind::deduped || r->kind == LogKind::relocked ||
                          r->kind == LogKind::handled || r->kind == LogKind::finished;
  if (one_record && r->records.size() != 1) {
    problem = std::string(to_string(r->kind)) + ": names " + std::to_string(r->records.size()) + " records, not one";
    return std::nullopt;
  }
  if (r->kind == LogKind::relocked && r->messages.size() != 1) {
    problem = "relocked: names " + std::to_string(r->messages.size()) + " rows, not one";
    return std::nullopt;
  }
  if (r->kind == LogKind::operation && r->types.empty()) {
    problem = "operation: an operation that wrote no message";
    return std::nullopt;
  }
  if (r->kind == LogKind::operation && r->first == 0) {
    problem = "operation: message ids count from 1";
    return std::nullopt;
  }
  if (r->kind == LogKind::granted && (r->token == 0 || r->lease.empty() || r->holder == 0)) {
    problem = "granted: a grant names its lease and holder, and fencing tokens count from 1";
    return std::nullopt;
  }
  return r;
}

// ---- LogChecker --------------------------------------------------------------------------------

std::string LogChecker::check(const LogRecord& r, const std::string& where) {
  static_cast<void>(where);
  if (r.kind == LogKind::started) {
    life_.start(r.at, r.logged);
    return {};
  }
  return life_.check(r.at, r.logged, r.kind == LogKind::stopped);
}

bool changed_by(model::LeaderWrite write, const model::Message& row) {
  return write != model::LeaderWrite::fence && (row.status == model::Status::processing || write == model::LeaderWrite::rescue);
}

bool commits_a_change(const LogRecord& r) {
  switch (r.kind) {
    case LogKind::operation: return r.committed;
    case LogKind::finished: return r.applied;
    case LogKind::leader_wrote:
      return r.applied &&
             std::any_of(r.messages.begin(), r.messages.end(), [&](const LogMessage& m) { return changed_by(r.write, m.row); });
    default: return false;
  }
}

// ---- EventLogWriter ----------------------------------------------------------------------------

EventLogWriter::EventLogWriter(const std::string& path, model::PodId pod, const Clock& clock,
                               std::optional<std::uint32_t> crash_after_commit)
    : log_(path, pod, clock, write_record), crash_after_commit_(crash_after_commit) {
  RELAYSIM_ASSERT(pod >= 1, "live pods are numbered from 1");
  RELAYSIM_ASSERT(!crash_after_commit || *crash_after_commit >= 1, "the crash point counts changes from 1");
}

void EventLogWriter::write(LogRecord& r) {
  if (crash_after_commit_ && commits_a_change(r) && --*crash_after_commit_ == 0) {
    // The change is committed (its event comes after the store's call returned); its line is not
    // written. SIGKILL, as a kill from outside: no destructor, no drain, nothing flushed.
    ::kill(::getpid(), SIGKILL);
  }
  log_.write(r);
}

void EventLogWriter::on(const model::OperationDone& e) {
  LogRecord r = event_record<LogRecord>(LogKind::operation, e.pod, e.at);
  r.shard = e.shard;
  r.key = e.key;
  r.version = e.version;
  r.first = e.first;
  r.types.assign(e.types.begin(), e.types.end());
  r.committed = e.committed;
  write(r);
}

void EventLogWriter::on(const model::LeadershipChanged& e) {
  LogRecord r = event_record<LogRecord>(LogKind::leadership, e.pod, e.at);
  r.shard = e.shard;
  r.token = e.token;
  r.leading = e.leading;
  r.until = e.until;
  write(r);
}

void EventLogWriter::on(const model::LeaderWrote& e) {
  LogRecord r = event_record<LogRecord>(LogKind::leader_wrote, e.pod, e.at);
  r.shard = e.shard;
  r.token = e.token;
  r.write = e.write;
  r.applied = e.applied;
  r.messages.reserve(e.messages.size());
  for (const model::Message& m : e.messages) r.messages.push_back(LogMessage{m});
  write(r);
}

void EventLogWriter::on(const model::Published& e) {
  LogRecord r = event_record<LogRecord>(LogKind::published, e.pod, e.at);
  r.shard = e.shard;
  r.producer = e.producer;
  r.partition = e.partition;
  r.sequence = e.first_sequence;
  r.records.reserve(e.records.size());
  for (const model::Record& x : e.records) r.records.push_back(entry(x));
  r.produced = e.outcome;
  r.attempt = e.attempt;
  write(r);
}

void EventLogWriter::on(const model::Relocked& e) {
  LogRecord r = event_record<LogRecord>(LogKind::relocked, e.pod, e.at);
  r.partition = e.delivery.partition;
  r.offset = e.delivery.offset;
  r.records.push_back(entry(e.delivery.record));
  r.relock = e.outcome;
  r.messages.push_back(LogMessage{e.row});
  write(r);
}

void EventLogWriter::on(const model::HandleDone& e) {
  LogRecord r = event_record<LogRecord>(LogKind::handled, e.pod, e.at);
  r.records.push_back(entry(e.record));
  r.handled = e.outcome;
  r.started = e.started;
  write(r);
}

void EventLogWriter::on(const model::Finished& e) {
  LogRecord r = event_record<LogRecord>(LogKind::finished, e.pod, e.at);
  r.records.push_back(entry(e.record));
  r.status = e.finish.status;
  r.reason = e.finish.reason;
  r.next_attempt = e.finish.next_attempt;
  r.applied = e.applied;
  write(r);
}

void EventLogWriter::on(const model::Consumed& e) {
  LogRecord r = event_record<LogRecord>(LogKind::consumed, e.pod, e.at);
  r.partition = e.partition;
  r.offset = e.offset;
  write(r);
}

void EventLogWriter::on(const model::OffsetsCommitted& e) {
  LogRecord r = event_record<LogRecord>(LogKind::committed, e.pod, e.at);
  r.generation = e.generation;
  r.partition = e.partition;
  r.offset = e.offset;
  write(r);
}

void EventLogWriter::on(const model::Polled& e) {
  LogRecord r = event_record<LogRecord>(LogKind::polled, e.pod, e.at);
  r.count = e.records;
  r.evicted = e.evicted;
  write(r);
}

void EventLogWriter::on(const model::StoreFailed& e) {
  LogRecord r = event_record<LogRecord>(LogKind::store_failed, e.pod, e.at);
  r.shard = e.shard;
  r.failure = e.failure;
  write(r);
}

void EventLogWriter::on(const sim::outbox::LogAppended& e) {
  LogRecord r = event_record<LogRecord>(LogKind::appended, log_.pod(), e.at);
  r.partition = e.partition;
  r.offset = e.offset;
  r.producer = e.producer;
  r.sequence = e.sequence;
  r.records.push_back(entry(e.record));
  write(r);
}

void EventLogWriter::on(const sim::outbox::LogDeduped& e) {
  LogRecord r = event_record<LogRecord>(LogKind::deduped, log_.pod(), e.at);
  r.partition = e.partition;
  r.producer = e.producer;
  r.sequence = e.sequence;
  r.same = e.same;
  r.records.push_back(entry(e.record));
  write(r);
}

void EventLogWriter::on(const sim::outbox::GroupCommitted& e) {
  LogRecord r = event_record<LogRecord>(LogKind::commit_answered, log_.pod(), e.at);
  r.member = e.member;
  r.partition = e.partition;
  r.offset = e.offset;
  r.applied = e.applied;
  write(r);
}

void EventLogWriter::on(const sim::LeaseGranted& e) {
  LogRecord r = event_record<LogRecord>(LogKind::granted, log_.pod(), e.at);
  r.lease = std::string(e.name);
  r.holder = e.holder;
  r.token = e.token;
  r.renewed = e.renewed;
  r.until = e.expires;
  write(r);
}

}  // namespace relaysim::live::outbox
