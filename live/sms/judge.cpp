#include "live/sms/judge.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <stdexcept>
#include <unordered_map>

#include "live/json_api.h"
#include "live/json_record.h"
#include "live/sms/config.h"
#include "live/serve_file.h"
#include "live/sms/directory.h"
#include "live/sms/event_log.h"
#include "model/sms/sqlite_store.h"
#include "model/store/sqlite_db.h"
#include "sim/loader.h"
#include "sim/sms/invariants.h"
#include "sim/sms/oracle.h"
#include "sim/sms/spec.h"
#include "sim/world/process.h"

namespace relaysim::live::sms {

namespace {

using nlohmann::json;
namespace ss = sim::sms;

// A submit as the world's log tells it: it reached `provider`, which drew `fate`.
struct Submitted {
  Time at{};
  model::ProviderId provider = 0;
  model::MessageId message = 0;
  std::uint16_t attempt = 0;
  ss::Fate fate = ss::Fate::accepted;
};

// The run's clock: Unix times less the run's epoch (run_epoch, live/sms/directory.h: a whole
// day, and a whole number of every width the gateway buckets time by), so that the oracle's times
// keep their time of day and their buckets (quiet hours are a time of day, and the directory's
// `last_active` is written from the same epoch). Nothing of the run may come before the world
// started.
struct RunClock {
  Duration start{};  // the world's start
  Duration day{};    // the run's epoch, on or before it
  Time of(Time unix_time, const char* name, const std::string& where) const {
    return world_time(plausible(unix_time, name, where), name, start, where) + (start - day);
  }
  // A time no real run reaches (the checkers add validities and backoffs to times) is refused.
  static Time plausible(Time t, const char* name, const std::string& where) {
    constexpr Duration kLatest = Duration::max() - std::chrono::hours(24 * 366 * 10);
    if (t.time_since_epoch() > kLatest) throw std::invalid_argument(where + ": '" + name + "' is past any real run's time");
    if (t < Time{}) throw std::invalid_argument(where + ": '" + name + "' is before 1970");
    return t;
  }
};

// The world's submit log; returns the run's clock.
RunClock read_world(const std::string& path, const sim::Scenario& scenario, const SmsServeConfig& config,
                    std::vector<Submitted>& out) {
  std::optional<Duration> started;
  Duration epoch{};
  each_line(path, "--receipts", [&](const std::string& text, const std::string& where) {
    const json j = parse_object(text, where);
    if (const auto w = j.find("world"); w != j.end()) {
      if (started) throw std::invalid_argument(where + ": a second world's log: judge one world's run at a time");
      started = world_started(*w, scenario.name, scenario.seed, "sms", "the SMS gateway's", where);
      RunClock::plausible(Time{*started}, "started_ns", where);
      epoch = Duration{field<std::int64_t>(*w, "epoch_ns", where)};
      return;
    }
    if (!started) throw std::invalid_argument(where + ": no world line before it: the log does not start as world writes it");
    Submitted s;
    s.at = Time{Duration{field<std::int64_t>(j, "at_ns", where)}};
    if (s.at < kTimeZero) throw std::invalid_argument(where + ": 'at_ns' is before the world started");
    if (s.at.time_since_epoch() > Duration::max() / 2) throw std::invalid_argument(where + ": 'at_ns' is past any real run's time");
    RunClock::plausible(Time{*started} + s.at.time_since_epoch(), "at_ns", where);
    const std::string provider = field<std::string>(j, "provider", where);
    const auto p = std::find_if(config.providers.begin(), config.providers.end(),
                                [&](const ProviderEndpoint& e) { return e.name == provider; });
    if (p == config.providers.end()) {
      throw std::invalid_argument(where + ": provider '" + provider + "' is not among the gateway's (serve.providers)");
    }
    s.provider = static_cast<model::ProviderId>(p - config.providers.begin());
    const std::string reference = field<std::string>(j, "reference", where);
    if (!whole_number(reference)) throw std::invalid_argument(where + ": 'reference' is not a message id: " + reference);
    try {
      s.message = std::stoull(reference);
    } catch (const std::exception&) {
      throw std::invalid_argument(where + ": 'reference' is not a message id: " + reference);
    }
    s.attempt = field<std::uint16_t>(j, "attempt", where);
    const std::string fate = field<std::string>(j, "fate", where);
    const std::optional<ss::Fate> f = ss::kFateNames.parse(fate);
    if (!f) throw std::invalid_argument(where + ": 'fate' is not a provider's fate: " + fate);
    s.fate = *f;
    out.push_back(s);
  });
  if (!started) throw std::invalid_argument("--receipts: " + path + " is empty: no world wrote it");
  const RunClock clock{*started, run_epoch(Time{*started}, config.platform, config.business).time_since_epoch()};
  if (clock.day != epoch) {
    throw std::invalid_argument("--receipts: " + path + ": the world ran with another serve configuration than " +
                                "the judge is given (its run's epoch differs): give the file the gateway and the world ran with");
  }
  for (Submitted& s : out) s.at += clock.start - clock.day;  // from the world's start to its day's
  std::stable_sort(out.begin(), out.end(), [](const Submitted& a, const Submitted& b) { return a.at < b.at; });
  return clock;
}

// How far past the ids the store and the logs account for a logged id may go (messages lost
// with their neighbours, unlogged).
constexpr std::uint64_t kLostIdsAtMost = 1'000'000;

// The longest biz_type or biz_id the judge reads (the oracle keeps keys shorter than 16 MiB).
constexpr std::size_t kLongestKey = 64 * 1024;

// A client's send call, answered.
struct Call {
  Time at{};  // when the answer came
  std::string label;
  ss::TokenKind token = ss::TokenKind::good;
  bool repeat = false;
  model::SendAnswer answer;
};

// What an HTTP answer of POST /v1/sms (live/sms/api.h) says of the send; nullopt for a request
// the API refused before it was a send (a 4xx with neither a token's fault nor an outcome: a body
// that is not a send, no Authorization header).
std::optional<model::SendAnswer> send_answer(int status, const json& body, const std::string& where) {
  model::SendAnswer a;
  if (!body.is_object()) throw std::invalid_argument(where + ": 'answer' is not the JSON object serve answered");
  if (const auto fault = body.find("fault"); fault != body.end()) {
    const std::optional<model::AuthFault> f = fault->is_string() ? model::kAuthFaultNames.parse(fault->get<std::string>()) : std::nullopt;
    if (!f || *f == model::AuthFault::none) throw std::invalid_argument(where + ": 'fault' is not a token's fault: " + fault->dump());
    a.fault = *f;
    return a;
  }
  if (!body.contains("outcome")) {
    if (status >= 400 && status < 500) return std::nullopt;
    if (status != 503) throw std::invalid_argument(where + ": an answer of status " + std::to_string(status) + " with no 'outcome' or 'fault'");
    a.unavailable = true;  // the store failed, or the process was draining: nothing was taken
    return a;
  }
  const std::string outcome = field<std::string>(body, "outcome", where);
  const std::optional<model::AcceptOutcome> o = model::kAcceptOutcomeNames.parse(outcome);
  if (!o) throw std::invalid_argument(where + ": 'outcome' is not a send's outcome: " + outcome);
  a.outcome = *o;
  if (body.contains("id")) a.first = field<model::MessageId>(body, "id", where);
  return a;
}

std::vector<Call> read_calls(const std::string& path, const RunClock& clock) {
  std::vector<Call> calls;
  if (path.empty()) return calls;
  each_line(path, "--calls", [&](const std::string& text, const std::string& where) {
    const json j = parse_object(text, where);
    Call c;
    const Time sent = clock.of(Time{Duration{field<std::int64_t>(j, "sent_ns", where)}}, "sent_ns", where);
    c.at = clock.of(Time{Duration{field<std::int64_t>(j, "answered_ns", where)}}, "answered_ns", where);
    if (c.at < sent) throw std::invalid_argument(where + ": answered before it was sent");
    c.label = field<std::string>(j, "key", where);
    const std::string token = field<std::string>(j, "token", where);
    const std::optional<ss::TokenKind> t = ss::kTokenKindNames.parse(token);
    if (!t) throw std::invalid_argument(where + ": 'token' is not one of good, forged, expired, foreign: " + token);
    c.token = *t;
    c.repeat = field<bool>(j, "repeat", where);
    const int status = field<int>(j, "status", where);
    if (status < 100 || status > 599) throw std::invalid_argument(where + ": field 'status' is not an HTTP status: " + std::to_string(status));
    const auto answer = j.find("answer");
    if (answer == j.end()) throw std::invalid_argument(where + ": no field 'answer'");
    const std::optional<model::SendAnswer> a = send_answer(status, *answer, where);
    if (!a) return;
    c.answer = *a;
    calls.push_back(std::move(c));
  });
  std::stable_sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) { return a.at < b.at; });
  return calls;
}

// One process's log, checked as it is read and put on the world's clock; or the changes the store
// holds that no log tells of (`recovered`).
struct Log {
  std::string path;
  std::vector<LogRecord> records;
  bool recovered = false;
};

std::vector<Log> read_logs(const std::vector<std::string>& paths, const RunClock& clock) {
  return read_event_logs<Log, LogChecker>(
      paths, read_record,
      [](const LogRecord& r, const std::string& where) {
        if (r.pod == 0 || r.pod > kMaxPod) {
          throw std::invalid_argument(where + ": pod " + std::to_string(r.pod) + ": live pods are numbered from 1 to " +
                                      std::to_string(kMaxPod) + " (serve --pod)");
        }
        for (const LogMessage& m : r.messages) {
          if (m.biz_type.size() > kLongestKey || m.biz_id.size() > kLongestKey) {
            throw std::invalid_argument(where + ": a key longer than the gateway takes");
          }
        }
      },
      [&](LogRecord& r, const std::string& where) {
        r.at = clock.of(r.at, "at", where);
        r.logged = clock.of(r.logged, "logged", where);
        if (r.kind == LogKind::submit_finished || r.kind == LogKind::completed) {
          r.due_at = r.due_at == kTimeZero ? kTimeZero : RunClock::plausible(r.due_at, "due_at", where) - clock.day;
        }
        for (LogMessage& m : r.messages) m.send_at = RunClock::plausible(m.send_at, "send_at", where) - clock.day;
      });
}

// What the store committed that no log tells of, as records at the times the store's status
// histories give (each change of a message's status is in its row, with its time and pod): the
// accepts, claims and completions of processes killed between a commit and its log line, the
// receipts applied by one, and the places in a frequency cap one took (the store keeps each with
// its time). A change matches a logged record by message, time and status; a place, by message
// and time.
// Refuses changes no killed process can explain — one that does not fall between the last line
// of a killed life and the next start of its pod (any pod's, for a change the store made itself:
// an accept for later, a receipt), one of a pod whose log was left out — and logs whose accepts
// name other keys than the database holds under their ids (another database's run). One log per
// message, so that each keeps its own order (an accept before its claim) while the merge puts
// them among the processes' by time.
std::vector<Log> unlogged(model::Store& store, const std::vector<Log>& logs, Duration day, model::MessageId stored) {
  using Key = std::tuple<model::MessageId, std::int64_t, model::Status>;
  std::set<Key> logged;
  std::set<model::MessageId> accepted;
  std::map<std::pair<model::MessageId, std::int64_t>, model::ClaimToken> claims;  // (message, time) -> token
  std::unordered_map<model::ClaimToken, std::uint16_t> submits;                  // by claim
  std::set<std::pair<model::MessageId, std::int64_t>> caps;  // the frequency cap's places logged
  std::set<model::PodId> pods;
  // Each killed life: its pod, its last line's time and the next start of its log (none: never).
  struct Death {
    model::PodId pod;
    Time last;
    Time restart;
  };
  std::vector<Death> deaths;
  std::unordered_map<model::MessageId, const LogRecord*> keys;  // the accept that named each id
  for (const Log& log : logs) {
    bool up = false;
    Time last{};
    model::PodId pod = 0;
    for (const LogRecord& r : log.records) {
      pods.insert(r.pod);
      const std::int64_t at = to_ns(r.at);
      switch (r.kind) {
        case LogKind::started:
          if (up) deaths.push_back({pod, last, r.at});
          up = true;
          pod = r.pod;
          break;
        case LogKind::stopped: up = false; break;
        case LogKind::accepted:
          if (r.outcome != model::AcceptOutcome::accepted) break;
          for (std::size_t i = 0; i < r.messages.size(); ++i) {
            accepted.insert(r.id + i);
            logged.emplace(r.id + i, at, model::Status::pending);
            keys[r.id + i] = &r;
          }
          break;
        case LogKind::claimed:
          logged.emplace(r.id, at, model::Status::in_flight);
          claims[{r.id, at}] = r.token;
          break;
        case LogKind::cap: caps.emplace(r.id, at); break;
        case LogKind::submit_started: ++submits[r.token]; break;
        case LogKind::completed:
          if (r.applied) logged.emplace(r.id, at, r.status);
          break;
        case LogKind::receipt:
          if (r.receipt == model::ReceiptOutcome::applied) {
            logged.emplace(r.id, at, r.delivered ? model::Status::delivered : model::Status::undelivered);
          }
          break;
        default: break;
      }
      last = r.at;
    }
    if (up) deaths.push_back({pod, last, Time::max()});
  }
  std::vector<Log> out;
  // Why `change`, made by `pod` (0: by the store itself, or by a pod it does not name) at `at` and
  // told of by no log, cannot be a killed process's; empty when it can.
  const auto unexplained = [&](const std::string& change, model::PodId pod, Time at) {
    if (pod != 0 && pods.count(pod) == 0) return change + ", whose log was not given: give every process's log (--events)";
    const bool after_a_death = std::any_of(deaths.begin(), deaths.end(), [&](const Death& d) {
      return (pod == 0 || d.pod == pod) && at >= d.last && at < d.restart;
    });
    if (after_a_death) return std::string();
    return change + " in the store, but no log tells of it, and no process was killed then (a log left out, or "
                    "another run's database)";
  };
  // The frequency cap's places no log tells of, by message; each is checked with its message's
  // history, whose claims say which pod took it.
  std::unordered_map<model::MessageId, std::vector<LogRecord>> unlogged_caps;
  for (const model::CapPlaceRow& p : store.cap_places()) {
    const std::string change = "--database: message " + std::to_string(p.message) + " took a place in the frequency cap of " +
                               std::to_string(p.recipient);
    const Time at = RunClock::plausible(p.at, "at", change) - day;
    if (caps.count({p.message, to_ns(at)}) != 0) continue;
    if (p.message == 0 || p.message > stored) throw std::invalid_argument(change + ", a message it does not hold");
    LogRecord r;
    r.kind = LogKind::cap;
    r.at = at;
    r.logged = at;
    r.id = p.message;
    r.recipient = p.recipient;
    unlogged_caps[p.message].push_back(r);
  }
  for (model::MessageId id = 1; id <= stored; ++id) {
    const std::optional<model::MessageRow> row = store.get(id);
    if (!row) throw std::invalid_argument("--database: message " + std::to_string(id) + " is missing: ids are never reused");
    if (row->biz_type.size() > kLongestKey || row->biz_id.size() > kLongestKey) {
      throw std::invalid_argument("--database: message " + std::to_string(id) + " has a key longer than the gateway takes");
    }
    if (const auto k = keys.find(id); k != keys.end()) {
      const LogRecord& a = *k->second;
      const LogMessage& m = a.messages[id - a.id];
      if (a.business != row->business || m.biz_type != row->biz_type || m.biz_id != row->biz_id) {
        throw std::invalid_argument("--database: message " + std::to_string(id) + " is " + row->biz_type + "/" +
                                    row->biz_id + " of business " + std::to_string(row->business) +
                                    ", but a log accepted it as " + m.biz_type + "/" + m.biz_id + " of business " +
                                    std::to_string(a.business) + ": the logs are not of this database's run");
      }
    }
    const std::vector<model::StatusChange> history = store.history(id);
    model::Status prior = model::Status::pending;
    model::ClaimToken token = 0;
    Log recovered{"--database", {}, true};
    for (std::size_t k = 0; k < history.size(); ++k) {
      const model::StatusChange& c = history[k];
      const Time at = RunClock::plausible(c.at, "history", "--database: message " + std::to_string(id)) - day;
      const std::int64_t ns = to_ns(at);
      if (c.status == model::Status::in_flight) {
        const auto t = claims.find({id, ns});
        token = t == claims.end() ? 0 : t->second;
      }
      const bool first_unlogged = k == 0 && accepted.count(id) == 0;
      if (!first_unlogged && logged.count({id, ns, c.status}) != 0) {
        prior = c.status;
        continue;
      }
      const std::string change = "--database: message " + std::to_string(id) + " became " +
                                 std::string(to_string(c.status)) +
                                 (c.pod != 0 ? " by pod " + std::to_string(c.pod) : std::string()) + " at " + format_time(at);
      if (const std::string why = unexplained(change, c.pod, at); !why.empty()) throw std::invalid_argument(why);
      LogRecord r;
      r.pod = c.pod;
      r.at = at;
      r.logged = at;
      r.id = id;
      r.provider = c.provider;
      r.message_kind = row->kind;
      r.recipient = row->recipient;
      if (first_unlogged) {
        r.kind = LogKind::accepted;
        r.business = row->business;
        r.period = row->period;
        r.path = model::SendPath::async;
        r.outcome = model::AcceptOutcome::accepted;
        r.messages.push_back(LogMessage{
            row->biz_type, row->biz_id,
            RunClock::plausible(row->send_at, "send_at", "--database: message " + std::to_string(id)) - day});
        recovered.records.push_back(r);
        r.messages.clear();
        if (c.status == model::Status::pending) continue;
      }
      if (c.status == model::Status::in_flight) {
        r.kind = LogKind::claimed;
        r.prior = prior;
        r.token = token;
      } else if (c.pod == 0 && (c.status == model::Status::delivered || c.status == model::Status::undelivered)) {
        r.kind = LogKind::receipt;
        r.delivered = c.status == model::Status::delivered;
        r.receipt = model::ReceiptOutcome::applied;
      } else {
        r.kind = LogKind::completed;
        r.token = token;
        r.status = c.status;
        r.reason = c.reason;
        r.due_at = at;
        const auto n = token == 0 ? submits.end() : submits.find(token);
        r.attempts = n == submits.end() ? 0 : n->second;
        r.provider_accepted = c.status == model::Status::submitted || c.status == model::Status::delivered ||
                              c.status == model::Status::undelivered;
        r.applied = true;
      }
      recovered.records.push_back(r);
      prior = c.status;
    }
    if (const auto caps_of = unlogged_caps.find(id); caps_of != unlogged_caps.end()) {
      // Each taken under the claim before it, by that claim's pod, which must have died before
      // logging it; then put between that claim and its submit: in time order, after what else
      // happened at its time.
      for (LogRecord& r : caps_of->second) {
        const std::string change = "--database: message " + std::to_string(id) + " took a place in the frequency cap of " +
                                   std::to_string(r.recipient) + " at " + format_time(r.at);
        const model::StatusChange* claim = nullptr;
        for (const model::StatusChange& c : history) {
          if (c.status == model::Status::in_flight && RunClock::plausible(c.at, "history", change) - day <= r.at) claim = &c;
        }
        if (claim == nullptr) throw std::invalid_argument(change + ", before any claim of it: no gateway takes one so");
        r.pod = claim->pod;
        if (const std::string why = unexplained(change + " under a claim by pod " + std::to_string(claim->pod), claim->pod, r.at);
            !why.empty()) {
          throw std::invalid_argument(why);
        }
        recovered.records.push_back(std::move(r));
      }
      std::stable_sort(recovered.records.begin(), recovered.records.end(),
                       [](const LogRecord& a, const LogRecord& b) { return a.at < b.at; });
    }
    if (!recovered.records.empty()) out.push_back(std::move(recovered));
  }
  return out;
}

// Refuses a --database that is not one an SMS serve left.
void check_database(const std::string& path) {
  const DbInspection db = inspect_database(path);
  if (!db.holds({"businesses", "messages"})) {
    throw std::invalid_argument("--database: " + path + " is not a database the SMS gateway's relaysim serve left" +
                                (!db.exists ? ": no such file" : db.is_directory ? ": a directory" : !db.is_sqlite ? " (" + db.error + ")" : ""));
  }
}

// The scenario as the run played it: the world's SMS scenario, with the gateway the serve
// configuration ran — its platform, its providers (by name, in its order), and the businesses
// the store holds, each with the configuration's business policy.
sim::Scenario scenario_as_run(const JudgeInputs& in, const SmsServeConfig& config, model::Store& store) {
  sim::Scenario scenario = sim::load_scenario(in.scenario);
  if (dynamic_cast<const ss::SmsSpec*>(&scenario.spec()) == nullptr) {
    throw std::invalid_argument(in.scenario + ": the serve configuration is the SMS gateway's, but the scenario's system is not sms");
  }
  ss::SmsSpec& spec = ss::spec_of(scenario);
  spec.platform = config.platform;
  std::vector<ss::ProviderSpec> providers;
  for (const ProviderEndpoint& e : config.providers) {
    const auto p = std::find_if(spec.providers.begin(), spec.providers.end(), [&](const ss::ProviderSpec& s) { return s.name == e.name; });
    ss::ProviderSpec named;
    named.name = e.name;
    providers.push_back(p != spec.providers.end() ? *p : named);
  }
  spec.providers = std::move(providers);
  spec.businesses.clear();
  for (model::BusinessId id = 1;; ++id) {
    const std::optional<model::BusinessRow> row = store.business(id);
    if (!row) break;
    spec.businesses.push_back(ss::BusinessSpec{row->name, row->quota, row->senders, row->templates, config.business, true});
  }
  return scenario;
}

// Hands the records to the oracle's checkers in the order described in judge.h.
class Replay {
 public:
  Replay(const SmsServeConfig& config, std::vector<Log>& logs, const std::vector<Submitted>& submits,
         const std::vector<Call>& calls, relaysim::sms::Events& model, relaysim::sms::Events& recovered,
         ss::WorldEvents& world, sim::ProcessEvents& processes, Judgement& out)
      : config_(config), logs_(logs), submits_(submits), calls_(calls), model_(model), recovered_(recovered),
        world_(world), processes_(processes), out_(out) {
    heads_.assign(logs_.size(), 0);
    lives_.assign(logs_.size(), Life{});
    pulling_.assign(logs_.size(), false);
    for (std::uint32_t l = 0; l < logs_.size(); ++l) {
      for (std::size_t i = 0; i < logs_[l].records.size(); ++i) {
        const LogRecord& r = logs_[l].records[i];
        if (r.kind != LogKind::accepted || r.outcome != model::AcceptOutcome::accepted) continue;
        for (std::size_t k = 0; k < r.messages.size(); ++k) accept_at_.try_emplace(r.id + k, l, i);
      }
    }
  }

  // Returns the time of the last thing replayed.
  Time run() {
    std::size_t s = 0;
    std::size_t c = 0;
    for (;;) {
      // The log whose next record comes first (ties: the earlier log), against the world's next
      // submit and the clients' next answer (ties: the log's record first, then the submit's).
      std::uint32_t best = kNoLog;
      for (std::uint32_t l = 0; l < logs_.size(); ++l) {
        if (heads_[l] == logs_[l].records.size()) continue;
        if (best == kNoLog || logs_[l].records[heads_[l]].logged < logs_[best].records[heads_[best]].logged) best = l;
      }
      const Time log_at = best == kNoLog ? Time::max() : logs_[best].records[heads_[best]].logged;
      const Time submit_at = s < submits_.size() ? submits_[s].at : Time::max();
      const Time call_at = c < calls_.size() ? calls_[c].at : Time::max();
      if (best == kNoLog && s == submits_.size() && c == calls_.size()) break;
      if (best != kNoLog && log_at <= submit_at && log_at <= call_at) {
        advance(best);
      } else if (s < submits_.size() && submit_at <= call_at) {
        submitted(submits_[s++]);
      } else {
        answered(calls_[c++]);
      }
    }
    for (std::uint32_t l = 0; l < logs_.size(); ++l) {
      if (lives_[l].up) crashed(l);
    }
    return last_;
  }

 private:
  static constexpr std::uint32_t kNoLog = std::numeric_limits<std::uint32_t>::max();
  struct Life {
    bool up = false;
    model::PodId pod = 0;
    Time last{};
  };

  // Replays log l's next record; first, when it is about a message whose accept another log
  // wrote later, that log up to the accept. A claim (or a receipt, or a repeat answered) follows
  // its accept's commit, but a process paused between that commit and its line writes the line
  // after another process's line about the message: the merge by `logged` would put it first.
  void advance(std::uint32_t l) {
    const LogRecord& r = logs_[l].records[heads_[l]];
    const bool about_a_message = r.kind != LogKind::started && r.kind != LogKind::stopped && r.kind != LogKind::mode &&
                                 (r.kind != LogKind::accepted || r.outcome != model::AcceptOutcome::accepted);
    if (about_a_message) {
      const auto it = accept_at_.find(r.id);
      // A log already being advanced is not pulled again: one that is not a real run's (a cycle
      // of lines each about the other's accepts) is replayed as merged.
      if (it != accept_at_.end() && it->second.first != l && heads_[it->second.first] <= it->second.second &&
          !pulling_[it->second.first]) {
        const auto [al, ai] = it->second;
        pulling_[l] = true;
        pulling_[al] = true;
        while (heads_[al] <= ai) advance(al);
        pulling_[al] = false;
        pulling_[l] = false;
      }
    }
    replay(l, logs_[l].records[heads_[l]++]);
  }

  void started(std::uint32_t l, const LogRecord& r) {
    if (lives_[l].up) crashed(l);
    lives_[l] = Life{true, r.pod, r.at};
    processes_.emit(sim::ProcessStarted{r.pod - 1, r.at});
  }

  void crashed(std::uint32_t l) {
    Life& life = lives_[l];
    ++out_.crashes;
    processes_.emit(sim::ProcessCrashed{life.pod - 1, life.last});
    life.up = false;
  }

  void replay(std::uint32_t l, const LogRecord& r) {
    last_ = std::max(last_, r.at);
    if (r.kind == LogKind::started) return started(l, r);
    lives_[l].last = r.at;
    if (logs_[l].recovered) ++out_.recovered;
    relaysim::sms::Events& bus = logs_[l].recovered ? recovered_ : model_;
    switch (r.kind) {
      case LogKind::started:
        return;
      case LogKind::stopped:
        lives_[l].up = false;
        return;
      case LogKind::accepted: return accepted(r, bus);
      case LogKind::claimed: {
        const model::MessageRow row = row_of(r);
        bus.emit(model::Claimed{r.pod, row, r.prior, r.at});
        return;
      }
      case LogKind::limit: return limited(r, logs_[l].path);
      case LogKind::cap:
        bus.emit(model::CapTaken{r.pod, r.id, r.token, r.recipient, r.at});
        return;
      case LogKind::submit_started: {
        ++out_.submits;
        const model::MessageRow row = row_of(r);
        bus.emit(model::SubmitStarted{r.pod, row, r.provider, r.attempt, r.path, r.at});
        return;
      }
      case LogKind::submit_finished:
        bus.emit(model::SubmitFinished{r.pod, r.id, r.provider, r.submit, r.latency, r.path,
                                          model::Decision{r.step, r.reason, r.due_at}, r.at, r.token});
        return;
      case LogKind::completed: {
        const model::MessageRow row = row_of(r);
        model::Completion c;
        c.status = r.status;
        c.reason = r.reason;
        c.at = r.at;
        c.due_at = r.due_at;
        c.provider = r.provider;
        c.pod = r.pod;
        c.attempts = r.attempts;
        c.accepted = r.provider_accepted;
        bus.emit(model::Completed{r.pod, row, c, r.applied, r.failed});
        return;
      }
      case LogKind::mode: {
        ++out_.mode_changes;
        model::ModeChange change;
        change.entered = r.entered;
        change.left = !r.entered;
        change.rule = r.rule;
        bus.emit(model::ModeChanged{r.pod, change, r.at});
        return;
      }
      case LogKind::receipt:
        if (r.receipt == model::ReceiptOutcome::applied) ++out_.receipts;
        bus.emit(model::ReceiptReceived{r.pod, r.id, r.provider, r.delivered, r.receipt, r.at});
        return;
    }
  }

  static model::MessageRow row_of(const LogRecord& r) {
    model::MessageRow row;
    row.id = r.id;
    row.claim_token = r.token;
    row.provider = r.provider;
    row.accepted = r.provider_accepted;
    row.kind = r.message_kind;
    row.recipient = r.recipient;
    return row;
  }

  void accepted(const LogRecord& r, relaysim::sms::Events& bus) {
    messages_.clear();
    for (const LogMessage& m : r.messages) {
      model::NewMessage n;
      n.biz_type = m.biz_type;
      n.biz_id = m.biz_id;
      n.send_at = m.send_at;
      messages_.push_back(n);
    }
    model::AcceptRequest req;
    req.business = r.business;
    req.epoch = r.epoch;
    req.now = r.at;
    req.period = r.period;
    req.messages = messages_;
    req.claim_for = r.path == model::SendPath::async ? 0 : r.pod;
    req.lease = config_.platform.lease;
    model::AcceptResult result;
    result.outcome = r.outcome;
    result.first = r.id;
    result.status = r.status;
    if (r.outcome == model::AcceptOutcome::accepted) out_.accepted += r.messages.size();
    bus.emit(model::Accepted{r.pod, req, result, r.path});
  }

  void limited(const LogRecord& r, const std::string& path) {
    if (r.via == LimitVia::store) ++out_.limit_by_store;
    SharedLimitConfig limit;
    if (r.business == 0) {
      if (!config_.platform.cluster_limit) throw std::invalid_argument(path + ": a decision of the cluster's limit, but the configuration has none (platform.limit)");
      limit = model::cluster_limit_config(config_.platform);
    } else {
      if (!config_.business.limit) throw std::invalid_argument(path + ": a decision of a business's limit, but the configuration gives businesses none (business.limit)");
      limit = model::business_limit_config(config_.platform, *config_.business.limit);
    }
    SharedDecision d;
    d.admitted = r.admitted;
    d.via = r.via;
    model_.emit(model::LimitDecided{r.pod, r.id, r.business, limit, r.member, d, r.at});
  }

  void answered(const Call& c) {
    last_ = std::max(last_, c.at);
    ++out_.calls;
    world_.emit(ss::ClientAnswered{0, c.token, c.repeat, c.answer, c.at, c.label});
  }

  void submitted(const Submitted& s) {
    last_ = std::max(last_, s.at);
    ++out_.provider_submits;
    world_.emit(ss::ProviderSubmitted{s.provider, 0, s.message, 0, s.attempt, s.fate, s.at});
  }

  const SmsServeConfig& config_;
  std::vector<Log>& logs_;
  const std::vector<Submitted>& submits_;
  const std::vector<Call>& calls_;
  relaysim::sms::Events& model_;
  relaysim::sms::Events& recovered_;  // the changes no log tells of (unlogged)
  ss::WorldEvents& world_;
  sim::ProcessEvents& processes_;
  Judgement& out_;
  std::vector<std::size_t> heads_;
  std::vector<Life> lives_;
  std::vector<bool> pulling_;  // by log: being advanced up to an accept another log's line is about
  // Where each message's accept is: its log and the record's place in it.
  std::unordered_map<model::MessageId, std::pair<std::uint32_t, std::size_t>> accept_at_;
  std::vector<model::NewMessage> messages_;
  Time last_{};
};

}  // namespace

Judgement judge(const JudgeInputs& in) {
  Judgement out;
  out.ledger = sim::Ledger(ss::kInvariants);
  const SmsServeConfig config = read_serve_config(in.config);
  check_database(in.database);
  model::SqliteStore store(in.database);
  sim::Scenario scenario = scenario_as_run(in, config, store);
  const ss::SmsSpec& spec = ss::spec_of(scenario);

  std::vector<Submitted> submits;
  const RunClock clock = read_world(in.receipts, scenario, config, submits);
  std::vector<Log> logs = read_logs(in.events, clock);
  const std::vector<Call> calls = read_calls(in.calls, clock);
  // What a killed process committed and never logged, from the store.
  std::uint64_t stored = 0;
  for (const std::uint64_t n : store.counts().by_status) stored += n;
  // A message the logs accepted and the store does not hold is lost (S-final says so); ids far past
  // any the store and the logs account for are another database's (and would cost the oracle
  // memory for every id below them).
  std::uint64_t logged_accepts = 0;
  model::MessageId last_id = 0;
  for (const Log& log : logs) {
    for (const LogRecord& r : log.records) {
      if (r.kind != LogKind::accepted || r.outcome != model::AcceptOutcome::accepted) continue;
      logged_accepts += r.messages.size();
      last_id = std::max<model::MessageId>(last_id, r.id + r.messages.size() - 1);
    }
  }
  if (last_id > stored + logged_accepts + kLostIdsAtMost) {
    throw std::invalid_argument("--database: " + in.database + " holds " + std::to_string(stored) + " messages, but a log "
                                "accepted message " + std::to_string(last_id) + ": the logs are not of this database's run");
  }
  for (Log& recovered : unlogged(store, logs, clock.day, stored)) logs.push_back(std::move(recovered));

  relaysim::sms::Events model;
  relaysim::sms::Events recovered;
  ss::WorldEvents world;
  sim::ProcessEvents processes;
  ss::Oracle oracle(spec, scenario.seed, out.ledger, sim::Judged::live);
  oracle.attach(model, world, processes);
  oracle.attach_recovered(recovered);
  Replay replay(config, logs, submits, calls, model, recovered, world, processes, out);
  const Time end = replay.run();
  oracle.finish(end, store);

  // S-scope's evidence is the clients' (which token was good) and the admin's (which grant was
  // revoked); the admin's calls are not logged live.
  if (in.calls.empty()) out.not_judged.emplace_back("S-scope", "no --calls");
  out.sent = oracle.sent();
  out.limit_checks = oracle.limit_checks();
  for (int c = 0; c < ss::kDuplicateCauseCount; ++c) {
    const auto cause = static_cast<ss::DuplicateCause>(c);
    if (const std::uint64_t n = oracle.duplicates(cause); n > 0) out.duplicates.emplace_back(std::string(to_string(cause)), n);
  }
  return out;
}

}  // namespace relaysim::live::sms
