#include "live/sms/event_log.h"

#include <type_traits>

#include <limits>

#include "model/core/assert.h"

namespace relaysim::live::sms {

namespace {

// The names of each enum a record writes by name (model/core/names.h).
struct Names {
  template <class E>
  static constexpr const auto& of() {
    if constexpr (std::is_same_v<E, LogKind>) return kLogKindNames;
    if constexpr (std::is_same_v<E, model::SendPath>) return model::kSendPathNames;
    if constexpr (std::is_same_v<E, model::AcceptOutcome>) return model::kAcceptOutcomeNames;
    if constexpr (std::is_same_v<E, model::Status>) return model::kStatusNames;
    if constexpr (std::is_same_v<E, model::Kind>) return model::kKindNames;
    if constexpr (std::is_same_v<E, LimitVia>) return kLimitViaNames;
    if constexpr (std::is_same_v<E, model::SubmitClass>) return model::kSubmitClassNames;
    if constexpr (std::is_same_v<E, model::Step>) return model::kStepNames;
    if constexpr (std::is_same_v<E, model::Reason>) return model::kReasonNames;
    if constexpr (std::is_same_v<E, model::AsyncRule>) return model::kAsyncRuleNames;
    if constexpr (std::is_same_v<E, model::ReceiptOutcome>) return model::kReceiptOutcomeNames;
  }
};

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
    case LogKind::accepted:
      io("id", r.id);
      io("business", r.business);
      io("epoch", r.epoch);
      io("period", r.period);
      io("path", r.path);
      io("outcome", r.outcome);
      io("status", r.status);
      io("messages", r.messages);
      return;
    case LogKind::claimed:
      io("id", r.id);
      io("token", r.token);
      io("prior", r.prior);
      io("provider", r.provider);
      io("provider_accepted", r.provider_accepted);
      io("kind", r.message_kind);
      io("recipient", r.recipient);
      return;
    case LogKind::limit:
      io("id", r.id);
      io("business", r.business);
      io("member", r.member);
      io("via", r.via);
      io("admitted", r.admitted);
      return;
    case LogKind::cap:
      io("id", r.id);
      io("token", r.token);
      io("recipient", r.recipient);
      return;
    case LogKind::submit_started:
      io("id", r.id);
      io("token", r.token);
      io("provider", r.provider);
      io("attempt", r.attempt);
      io("path", r.path);
      io("kind", r.message_kind);
      io("recipient", r.recipient);
      return;
    case LogKind::submit_finished:
      io("id", r.id);
      io("token", r.token);
      io("provider", r.provider);
      io("submit", r.submit);
      io("latency", r.latency);
      io("path", r.path);
      io("step", r.step);
      io("reason", r.reason);
      io("due_at", r.due_at);
      return;
    case LogKind::completed:
      io("id", r.id);
      io("token", r.token);
      io("status", r.status);
      io("reason", r.reason);
      io("due_at", r.due_at);
      io("provider", r.provider);
      io("attempts", r.attempts);
      io("provider_accepted", r.provider_accepted);
      io("applied", r.applied);
      io("failed", r.failed);
      io("kind", r.message_kind);
      io("recipient", r.recipient);
      return;
    case LogKind::mode:
      io("rule", r.rule);
      io("entered", r.entered);
      return;
    case LogKind::receipt:
      io("id", r.id);
      io("provider", r.provider);
      io("delivered", r.delivered);
      io("receipt", r.receipt);
      return;
  }
}

std::string write_record(const LogRecord& r) { return write_event_line<Names>(r); }

std::optional<LogRecord> read_record(std::string_view line, std::string& problem) {
  std::optional<LogRecord> r = read_event_line<Names, LogRecord>(line, problem);
  if (r && r->kind == LogKind::accepted && r->messages.empty()) {
    problem = "accepted: an accepted request names no message";
    return std::nullopt;
  }
  return r;
}

// ---- LogChecker --------------------------------------------------------------------------------

void LogChecker::next_log() {
  life_.next_log();
  held_.clear();
  last_accepted_ = 0;
}

std::string LogChecker::check(const LogRecord& r, const std::string& where) {
  if (r.kind == LogKind::started) {
    // A new life: a killed process's claims are no longer its own.
    life_.start(r.at, r.logged);
    held_.clear();
    last_limit_ = r.at;
    return {};
  }
  if (std::string problem = life_.check(r.at, r.logged, r.kind == LogKind::stopped); !problem.empty()) return problem;
  switch (r.kind) {
    case LogKind::accepted:
      if (r.outcome != model::AcceptOutcome::accepted) return {};
      if (r.id <= last_accepted_) {
        return "message " + std::to_string(r.id) + " accepted after message " + std::to_string(last_accepted_) +
               ": the database hands ids out in order, and a process logs its accepts in the order it committed them";
      }
      if (r.id > std::numeric_limits<model::MessageId>::max() - r.messages.size()) return "message ids past the last one";
      last_accepted_ = r.id + r.messages.size() - 1;
      for (std::size_t i = 0; i < r.messages.size(); ++i) {
        const auto [it, fresh] = accepted_.try_emplace(r.id + i, where);
        if (!fresh) return "message " + std::to_string(r.id + i) + " was accepted already, at " + it->second;
      }
      return {};
    case LogKind::limit:
      // A limit decides at the moment it is asked, and one process asks one at a time.
      if (r.at < last_limit_) return "a limit's decision before the one logged before it";
      last_limit_ = r.at;
      return {};
    case LogKind::claimed: {
      const auto [it, fresh] = tokens_.try_emplace(r.token, where);
      if (!fresh) return "claim token " + std::to_string(r.token) + " was handed out already, at " + it->second;
      held_[r.token] = r.id;
      return {};
    }
    case LogKind::cap:
    case LogKind::submit_started:
    case LogKind::submit_finished:
    case LogKind::completed: {
      const auto it = held_.find(r.token);
      if (it == held_.end() || it->second != r.id) {
        return "message " + std::to_string(r.id) + " under claim token " + std::to_string(r.token) +
               ", a claim this process does not hold";
      }
      if (r.kind == LogKind::completed) held_.erase(it);
      return {};
    }
    default:
      return {};
  }
}

// ---- EventLogWriter ----------------------------------------------------------------------------

EventLogWriter::EventLogWriter(const std::string& path, model::PodId pod, const Clock& clock)
    : log_(path, pod, clock, write_record) {
  RELAYSIM_ASSERT(pod >= 1, "live pods are numbered from 1");
}

void EventLogWriter::on(const model::Accepted& e) {
  LogRecord r = event_record<LogRecord>(LogKind::accepted, e.pod, e.request.now);
  r.id = e.result.first;
  r.business = e.request.business;
  r.epoch = e.request.epoch;
  r.period = e.request.period;
  r.path = e.path;
  r.outcome = e.result.outcome;
  r.status = e.result.status;
  r.messages.reserve(e.request.messages.size());
  for (const model::NewMessage& m : e.request.messages) {
    r.messages.push_back(LogMessage{std::string(m.biz_type), std::string(m.biz_id), m.send_at});
  }
  log_.write(r);
}

void EventLogWriter::on(const model::Claimed& e) {
  LogRecord r = event_record<LogRecord>(LogKind::claimed, e.pod, e.at);
  r.id = e.row.id;
  r.token = e.row.claim_token;
  r.prior = e.prior;
  r.provider = e.row.provider;
  r.provider_accepted = e.row.accepted;
  r.message_kind = e.row.kind;
  r.recipient = e.row.recipient;
  log_.write(r);
}

void EventLogWriter::on(const model::LimitDecided& e) {
  LogRecord r = event_record<LogRecord>(LogKind::limit, e.pod, e.at);
  r.id = e.message;
  r.business = e.business;
  r.member = e.member;
  r.via = e.decision.via;
  r.admitted = e.decision.admitted;
  log_.write(r);
}

void EventLogWriter::on(const model::CapTaken& e) {
  LogRecord r = event_record<LogRecord>(LogKind::cap, e.pod, e.at);
  r.id = e.message;
  r.token = e.claim;
  r.recipient = e.recipient;
  log_.write(r);
}

void EventLogWriter::on(const model::SubmitStarted& e) {
  LogRecord r = event_record<LogRecord>(LogKind::submit_started, e.pod, e.at);
  r.id = e.row.id;
  r.token = e.row.claim_token;
  r.provider = e.provider;
  r.attempt = e.attempt;
  r.path = e.path;
  r.message_kind = e.row.kind;
  r.recipient = e.row.recipient;
  log_.write(r);
}

void EventLogWriter::on(const model::SubmitFinished& e) {
  LogRecord r = event_record<LogRecord>(LogKind::submit_finished, e.pod, e.at);
  r.id = e.message;
  r.token = e.claim;
  r.provider = e.provider;
  r.submit = e.outcome;
  r.latency = e.latency;
  r.path = e.path;
  r.step = e.decision.step;
  r.reason = e.decision.reason;
  r.due_at = e.decision.due;
  log_.write(r);
}

void EventLogWriter::on(const model::Completed& e) {
  LogRecord r = event_record<LogRecord>(LogKind::completed, e.pod, e.completion.at);
  r.id = e.row.id;
  r.token = e.row.claim_token;
  r.status = e.completion.status;
  r.reason = e.completion.reason;
  r.due_at = e.completion.due_at;
  r.provider = e.completion.provider;
  r.attempts = e.completion.attempts;
  r.provider_accepted = e.completion.accepted;
  r.applied = e.applied;
  r.failed = e.failed;
  r.message_kind = e.row.kind;
  r.recipient = e.row.recipient;
  log_.write(r);
}

void EventLogWriter::on(const model::ModeChanged& e) {
  LogRecord r = event_record<LogRecord>(LogKind::mode, e.pod, e.at);
  r.rule = e.change.rule;
  r.entered = e.change.entered;
  log_.write(r);
}

void EventLogWriter::on(const model::ReceiptReceived& e) {
  LogRecord r = event_record<LogRecord>(LogKind::receipt, e.pod, e.at);
  r.id = e.message;
  r.provider = e.provider;
  r.delivered = e.delivered;
  r.receipt = e.outcome;
  log_.write(r);
}

}  // namespace relaysim::live::sms
