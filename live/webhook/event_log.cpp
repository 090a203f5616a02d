#include "live/webhook/event_log.h"

#include <stdexcept>
#include <type_traits>

#include "live/json_record.h"
#include "model/core/assert.h"

namespace relaysim::live::webhook {

namespace {

// The names of each enum a record writes by name (model/core/names.h).
struct Names {
  template <class E>
  static constexpr const auto& of() {
    if constexpr (std::is_same_v<E, LogKind>) return kLogKindNames;
    if constexpr (std::is_same_v<E, model::CreateOutcome>) return model::kCreateOutcomeNames;
    if constexpr (std::is_same_v<E, model::ReplayOutcome>) return model::kReplayOutcomeNames;
    if constexpr (std::is_same_v<E, model::LookupStatus>) return model::kLookupStatusNames;
    if constexpr (std::is_same_v<E, model::Status>) return model::kStatusNames;
    if constexpr (std::is_same_v<E, model::Reason>) return model::kReasonNames;
    if constexpr (std::is_same_v<E, NetError>) return kNetErrorNames;
    if constexpr (std::is_same_v<E, BreakerState>) return kBreakerStateNames;
  }
};

}  // namespace

template <class Self, class Io>
void LogRecord::fields(Self& r, Io& io) {
  io("pod", r.pod);
  io("at", r.at);
  switch (r.kind) {
    case LogKind::started:
    case LogKind::stopped:
      return;
    case LogKind::ingested:
      io("id", r.id);
      io("cxid", r.cxid);
      io("request_id", r.request_id);
      io("outcome", r.outcome);
      io("created_at", r.created_at);
      io("deadline_at", r.deadline_at);
      return;
    case LogKind::claimed:
      io("id", r.id);
      io("deadline_at", r.deadline_at);
      io("token", r.token);
      return;
    case LogKind::attempt_started:
      io("id", r.id);
      io("number", r.number);
      io("url", r.url);
      io("version", r.version);
      return;
    case LogKind::attempt_finished:
      io("id", r.id);
      io("number", r.number);
      io("error", r.error);
      io("http_status", r.http_status);
      io("retry_after", r.retry_after);
      return;
    case LogKind::completed:
      io("id", r.id);
      io("token", r.token);
      io("number", r.number);
      io("status", r.status);
      io("reason", r.reason);
      io("due_at", r.due_at);
      io("applied", r.applied);
      io("failed", r.failed);
      return;
    case LogKind::notified:
      io("id", r.id);
      io("notice", r.notice);
      io("life", r.life);
      io("sends", r.sends);
      io("status", r.status);
      io("reason", r.reason);
      io("ended_at", r.ended_at);
      return;
    case LogKind::replayed:
      io("id", r.id);
      io("replay", r.replay);
      io("deadline_at", r.deadline_at);
      return;
    case LogKind::lookup:
      io("cxid", r.cxid);
      io("lookup", r.lookup);
      io("version", r.version);
      io("sent_at", r.sent_at);
      return;
    case LogKind::breaker:
      io("from", r.from);
      io("to", r.to);
      return;
  }
}

std::string write_record(const LogRecord& r) { return write_event_line<Names>(r); }

std::optional<LogRecord> read_record(std::string_view line, std::string& problem) {
  return read_event_line<Names, LogRecord>(line, problem);
}

// ---- LogChecker --------------------------------------------------------------------------------

namespace {

// How the checks' messages name the record's request.
std::string request_of(const LogRecord& r) { return "request " + std::to_string(r.id); }

}  // namespace

void LogChecker::next_log() {
  end_life();
  up_ = false;
}

void LogChecker::end_life() {
  open_.clear();  // a killed process's claims stay in flight; a stopped one's were left to their leases
  breaker_ = BreakerState::closed;
  last_created_ = 0;
}

std::string LogChecker::check(const LogRecord& r, const std::string& where) {
  const std::string kind(to_string(r.kind));
  if (r.kind == LogKind::started) {
    end_life();  // after a stop, or a kill
    up_ = true;
    started_at_ = r.at;
    return {};
  }
  if (!up_) return "a '" + kind + "' while no process was running (after 'stopped', or before any 'started')";
  if (std::string p = before_start(r, r.at, "is"); !p.empty()) return p;
  switch (r.kind) {
    case LogKind::started: break;
    case LogKind::stopped: up_ = false; break;
    case LogKind::ingested: return check_create(r, where);
    case LogKind::claimed: return check_claim(r, where);
    case LogKind::attempt_started: return check_attempt_started(r);
    case LogKind::attempt_finished: return check_attempt_finished(r);
    case LogKind::completed: return check_completion(r);
    case LogKind::notified:
      if ((r.status != model::Status::failed && r.status != model::Status::dead_lettered) || r.sends == 0 ||
          r.notice == 0 || r.ended_at > r.at) {
        return "a notice to " + request_of(r) + "'s tenant that is not of a failure that ended before it, sent at least once";
      }
      break;
    case LogKind::replayed: break;
    case LogKind::lookup:
      if (r.at < r.sent_at) return "a lookup answered " + format_duration(r.sent_at - r.at) + " before it was sent";
      if (std::string p = before_start(r, r.sent_at, "was sent"); !p.empty()) return p;
      break;
    case LogKind::breaker:
      if (r.from != breaker_ || r.from == r.to) {
        return std::string("the breaker moves from ") + std::string(to_string(r.from)) + " to " + std::string(to_string(r.to)) +
               ", but it was " + std::string(to_string(breaker_));
      }
      breaker_ = r.to;
      break;
  }
  return {};
}

std::string LogChecker::before_start(const LogRecord& r, Time t, const char* what) const {
  const std::string kind(to_string(r.kind));
  return t < started_at_ ? "'" + kind + "' " + what + " " + format_duration(started_at_ - t) +
                               " before its process started: a process's clock never goes back"
                         : std::string();
}

// The open claim of `id` that `fits`, or nullptr.
template <class Fits>
LogChecker::Claim* LogChecker::claim_of(model::RequestId id, Fits fits) {
  const auto it = open_.find(id);
  if (it == open_.end()) return nullptr;
  for (Claim& c : it->second) {
    if (fits(c)) return &c;
  }
  return nullptr;
}

std::string LogChecker::check_create(const LogRecord& r, const std::string& where) {
  if (r.deadline_at < r.created_at) return "a create whose deadline_at is before its created_at";
  if (std::string p = before_start(r, r.created_at, "created_at is"); !p.empty()) return p;
  if (r.outcome == model::CreateOutcome::created) {
    const std::string request = request_of(r);
    if (const auto [it, added] = created_.emplace(r.id, where); !added) {
      return request + " created a second time (also at " + it->second + "): the database hands out an id once";
    }
    if (r.id <= last_created_) {
      return request + " created after request " + std::to_string(last_created_) +
             " by the same process: the database hands out ids in increasing order";
    }
    last_created_ = r.id;
  }
  return {};
}

std::string LogChecker::check_claim(const LogRecord& r, const std::string& where) {
  if (const auto [it, added] = tokens_.emplace(r.token, where); !added) {
    return "claim token " + std::to_string(r.token) + " handed out a second time (also at " + it->second +
           "): the database hands out a token once";
  }
  open_[r.id].push_back({r.token, r.at});
  return {};
}

std::string LogChecker::check_attempt_started(const LogRecord& r) {
  const std::string request = request_of(r);
  if (r.number == 0) return "attempt 0 of " + request + ": attempts count from 1";
  Claim* c = claim_of(r.id, [](const Claim& x) { return x.number == 0; });
  if (c == nullptr) return "an attempt of " + request + " without a claim of it this process holds and has made no attempt under";
  if (r.at < c->at) return "attempt " + std::to_string(r.number) + " of " + request + " starts before its claim";
  c->number = r.number;
  c->attempt_at = r.at;
  return {};
}

std::string LogChecker::check_attempt_finished(const LogRecord& r) {
  const std::string request = request_of(r);
  Claim* c = claim_of(r.id, [&](const Claim& x) { return x.number == r.number && !x.finished; });
  if (r.number == 0 || c == nullptr) {
    return "attempt " + std::to_string(r.number) + " of " + request + " finishes, but this process has no such attempt under way";
  }
  if (r.at < c->attempt_at) return "attempt " + std::to_string(r.number) + " of " + request + " finishes before it starts";
  c->finished = true;
  return {};
}

std::string LogChecker::check_completion(const LogRecord& r) {
  const std::string request = request_of(r);
  const auto it = open_.find(r.id);
  Claim* c = claim_of(r.id, [&](const Claim& x) { return x.token == r.token; });
  if (c == nullptr) {
    return "a completion of " + request + " under claim token " + std::to_string(r.token) + ", which this process does not hold";
  }
  if (r.number != c->number) {
    return "the completion of " + request + " names attempt " + std::to_string(r.number) + "; its claim made " +
           (c->number == 0 ? std::string("none") : "attempt " + std::to_string(c->number));
  }
  if (c->number != 0 && !c->finished) return "the completion of " + request + " comes before its attempt finished";
  if (r.at < c->at) return "the completion of " + request + " comes before its claim";
  if (r.status == model::Status::in_flight) return "a completion that leaves " + request + " in flight";
  RELAYSIM_ASSERT(it != open_.end(), "a claim found is one of the open claims");
  std::vector<Claim>& claims = it->second;
  claims.erase(claims.begin() + (c - claims.data()));
  if (claims.empty()) open_.erase(it);
  return {};
}

// ---- EventLogWriter ---------------------------------------------------------------------------

EventLogWriter::EventLogWriter(const std::string& path, model::PodId pod) : file_(path, "--events"), pod_(pod) {
  RELAYSIM_ASSERT(pod >= 1, "live pods are numbered from 1");
}

EventLogWriter::~EventLogWriter() = default;

void EventLogWriter::write(const LogRecord& r) {
  std::string line = write_record(r);
  line += '\n';
  if (commits_ != nullptr && commits_->group_open()) {
    if (held_.empty()) {
      commits_->when_committed([this](bool committed) {
        // Taken out first: a line logged while these are written belongs to the next group.
        std::string lines;
        lines.swap(held_);
        if (committed) file_.append(lines);
      });
    }
    held_ += line;
    return;
  }
  file_.append(line);
}

void EventLogWriter::started(Time at) { write(event_record<LogRecord>(LogKind::started, pod_, at)); }

void EventLogWriter::stopped(Time at) { write(event_record<LogRecord>(LogKind::stopped, pod_, at)); }

void EventLogWriter::on(const model::Ingested& e) {
  LogRecord r = event_record<LogRecord>(LogKind::ingested, e.pod, e.at);
  r.id = e.result.id;
  r.cxid = e.request.cxid;
  r.request_id = e.request.request_id;
  r.outcome = e.result.outcome;
  r.created_at = e.request.created_at;
  r.deadline_at = e.request.deadline_at;
  write(r);
}

void EventLogWriter::on(const model::Claimed& e) {
  LogRecord r = event_record<LogRecord>(LogKind::claimed, e.pod, e.at);
  r.id = e.row.id;
  r.deadline_at = e.row.deadline_at;
  r.token = e.row.claim_token;
  write(r);
}

void EventLogWriter::on(const model::AttemptStarted& e) {
  LogRecord r = event_record<LogRecord>(LogKind::attempt_started, e.pod, e.at);
  r.id = e.row.id;
  r.number = e.number;
  r.url = e.url;
  r.version = e.serviceb_version;
  write(r);
}

void EventLogWriter::on(const model::AttemptFinished& e) {
  LogRecord r = event_record<LogRecord>(LogKind::attempt_finished, e.pod, e.attempt.finished_at);
  r.id = e.attempt.request;
  r.number = e.attempt.number;
  r.error = e.result.error;
  r.http_status = e.result.status;
  r.retry_after = e.result.retry_after;
  write(r);
}

void EventLogWriter::on(const model::Completed& e) {
  LogRecord r = event_record<LogRecord>(LogKind::completed, e.pod, e.completion.at);
  r.id = e.row.id;
  r.token = e.row.claim_token;
  r.number = e.completion.attempt != nullptr ? e.completion.attempt->number : 0;
  r.status = e.completion.status;
  r.reason = e.completion.reason;
  r.due_at = e.completion.due_at;
  r.applied = e.applied;
  r.failed = e.failed;
  write(r);
}

void EventLogWriter::on(const model::TenantNotified& e) {
  LogRecord r = event_record<LogRecord>(LogKind::notified, e.pod, e.at);
  r.id = e.notice.request;
  r.notice = e.notice.id;
  r.life = e.notice.life;
  r.sends = e.notice.sends;
  r.status = e.notice.status;
  r.reason = e.notice.reason;
  r.ended_at = e.notice.at;
  write(r);
}

void EventLogWriter::on(const model::Replayed& e) {
  LogRecord r = event_record<LogRecord>(LogKind::replayed, e.pod, e.at);
  r.id = e.id;
  r.replay = e.outcome;
  r.deadline_at = e.deadline_at;
  write(r);
}

void EventLogWriter::on(const model::LookupFinished& e) {
  LogRecord r = event_record<LogRecord>(LogKind::lookup, e.pod, e.at);
  r.cxid = e.cxid;
  r.lookup = e.status;
  r.version = e.version;
  r.sent_at = e.sent_at;
  write(r);
}

void EventLogWriter::on(const model::BreakerChanged& e) {
  LogRecord r = event_record<LogRecord>(LogKind::breaker, e.pod, e.at);
  r.from = e.from;
  r.to = e.to;
  write(r);
}

}  // namespace relaysim::live::webhook
