#include "live/webhook/judge.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "live/clock.h"
#include "live/json_integer.h"
#include "live/json_record.h"
#include "live/webhook/api.h"
#include "live/webhook/config.h"
#include "live/webhook/event_log.h"
#include "live/webhook/world.h"
#include "model/core/assert.h"
#include "model/core/random.h"
#include "model/store/sqlite_db.h"
#include "model/webhook/sqlite_store.h"
#include "sim/loader.h"
#include "sim/report/backlog.h"
#include "sim/webhook/invariants.h"
#include "sim/webhook/oracle.h"
#include "sim/webhook/report.h"
#include "sim/webhook/serviceb.h"
#include "sim/webhook/spec.h"
#include "sim/world/store_faults.h"

namespace relaysim::live::webhook {

namespace {

using nlohmann::json;
namespace sw = sim::webhook;

std::uint32_t cxid_index(std::string_view cxid) {
  const std::int64_t c = sw::ServiceB::cxid_index(cxid);
  return c < 0 || c >= std::int64_t{UINT32_MAX} ? UINT32_MAX : static_cast<std::uint32_t>(c);
}

constexpr std::uint64_t kNone = UINT64_MAX;         // no such record
constexpr std::uint32_t kNoAttempt = UINT32_MAX;
// A killed process died after the last line it logged: the least time after. What it had in
// flight was still in flight then.
constexpr Duration kAfter{1};
// The judge's one tolerance. Each serve process and the world keep time on a LiveClock: the
// system's wall clock read once at start against the steady clock, within kClockReadError
// (live/clock.h), and the steady clock since; the client's times are the wall clock's, read
// directly. So two records written by different processes may stand out of their true order by
// less than kClockReadError, never more: a receipt can seem to come this much before the start of
// the attempt that carried it, or after its end; a client call this much after the create it
// caused. Within one process there is one clock and no tolerance: W-url, W-retry and W-deadline
// compare times of one log. (A run during which the wall clock was stepped cannot be judged.)
constexpr Duration kClockSkew = kClockReadError;
Time died_after(const LogRecord& last) { return last.at + kAfter; }

struct Receipt {
  Time at{};
  std::uint32_t endpoint = 0;
  std::string url;  // the simulator's form
  std::string webhook_id;
  int status = 0;
  bool answered = true;
  std::uint64_t key = 0;
  std::uint64_t payload = 0;
};

struct Call {
  sw::ClientKey key;
  std::string cxid;
  std::string request_id;
  Time sent{};
  Time answered{};
  int status = 0;  // 0: no answer
  bool duplicate = false;
  model::RequestId id = 0;
};

// One event of the merged stream, in the order it is handed to the checkers: by time, then the
// serve record it hangs on (a client call just before its create; after it, the receipt of the
// attempt it started, a completion recovered from the store, a crash, a lookup sent then), then
// its place.
struct Item {
  enum class What : std::uint8_t { record, recovered, calling, sent, crashed, stopped, lookup, created };
  Time key{};
  std::uint32_t log = 0;     // the serve log it hangs on; kFree: none
  std::uint64_t seq = 0;     // the record it hangs on, in that log
  int sub = 0;               // -1 before that record, 0 the record, 1.. after it (by What)
  What what = What::record;
  std::uint32_t index = 0;    // into the records, lookups, receipts or calls
  std::uint32_t attempt = 0;  // sent: the attempt that carried it, or kNoAttempt
  static constexpr std::uint32_t kFree = UINT32_MAX;
  bool operator<(const Item& o) const {
    return std::tie(key, log, seq, sub, what, index) < std::tie(o.key, o.log, o.seq, o.sub, o.what, o.index);
  }
};

// Where each record of each log goes in the merged stream: its time, never before an earlier
// record of its own log (a process logs in the order things happened to it) — and creates in the
// order of their ids. The database hands ids out in the order creates commit, but a create's
// time is read before its commit: two processes creating at once may commit in the other order.
// So a create is placed no earlier than the create of the id before it, and what its process
// logged after it moves along.
std::vector<std::vector<Time>> places_in_time(const std::vector<std::vector<LogRecord>>& logs) {
  struct Create {
    model::RequestId id;
    std::uint32_t log;
    std::uint64_t seq;
    bool operator<(const Create& o) const { return id < o.id; }
  };
  std::vector<Create> creates;
  for (std::uint32_t l = 0; l < logs.size(); ++l) {
    for (std::uint64_t s = 0; s < logs[l].size(); ++s) {
      const LogRecord& r = logs[l][s];
      if (r.kind == LogKind::ingested && r.outcome == model::CreateOutcome::created) creates.push_back({r.id, l, s});
    }
  }
  std::sort(creates.begin(), creates.end());
  std::vector<std::vector<Time>> keys(logs.size());
  // Places the records of log l up to and including `until`; `floor` holds for the last of them.
  auto place = [&](std::uint32_t l, std::uint64_t until, Time floor) {
    RELAYSIM_ASSERT(l < logs.size() && until < logs[l].size(), "a record of a log");
    std::vector<Time>& k = keys[l];
    while (k.size() <= until) {
      const Time previous = k.empty() ? Time::min() : k.back();
      k.push_back(std::max(previous, logs[l][k.size()].at));
    }
    k[until] = std::max(k[until], floor);
  };
  Time last_create = Time::min();
  for (const Create& c : creates) {
    // Ids grow within a log, so its records before this create are placed once, here.
    if (c.seq > 0) place(c.log, c.seq - 1, Time::min());
    place(c.log, c.seq, last_create == Time::min() ? Time::min() : last_create + Duration{1});
    last_create = keys[c.log][c.seq];
  }
  for (std::uint32_t l = 0; l < logs.size(); ++l) {
    if (!logs[l].empty()) place(l, logs[l].size() - 1, Time::min());
  }
  return keys;
}


// The world's receipts, on the world's clock; returns the world's start, by which every time of
// the run is shifted, and sets `base`, where the world served.
Duration read_receipts(const std::string& path, const sim::Scenario& scenario, std::vector<Receipt>& receipts,
                       std::string& base) {
  std::optional<Duration> shift;
  std::unordered_map<std::string, std::string> seen;  // webhook-id@time -> where
  each_line(path, "--receipts", [&](const std::string& text, const std::string& where) {
    const json j = parse_object(text, where);
    if (const auto w = j.find("world"); w != j.end()) {
      // A world restarted on the same file is another world (its clock, outages and URL versions
      // start again): one run is one world's.
      if (shift) throw std::invalid_argument(where + ": a second world's receipts in the file: judge one world's run");
      shift = world_started(*w, scenario.name, scenario.seed, "webhook", "the webhook platform's", where);
      base = field<std::string>(*w, "base", where);
      return;
    }
    if (!shift) throw std::invalid_argument(where + ": a receipt before the {\"world\": ...} line: not the receipts of a relaysim world");
    Receipt r;
    r.at = world_time(j, "at_ns", *shift, where);
    r.endpoint = field<std::uint32_t>(j, "endpoint", where);
    r.url = sim_url(base + field<std::string>(j, "target", where), base);  // what was asked of the world, whole
    r.webhook_id = field<std::string>(j, "webhook_id", where);
    r.status = field<int>(j, "status", where);
    r.answered = field<bool>(j, "answered", where);
    r.key = field<std::uint64_t>(j, "key", where);
    if (r.key == 0) {
      throw std::invalid_argument(where + ": the payload names no key: the judge needs payloads whose first key, as stored "
                                  "(keys sorted), is \"seq\" with the client's key number (docs/live.md)");
    }
    r.payload = field<std::uint64_t>(j, "payload_digest", where);
    // One request reaches the world at one moment: the same receipt twice is a line given twice.
    if (const auto [it, added] = seen.emplace(r.webhook_id + '@' + std::to_string(to_ns(r.at)), where); !added) {
      throw std::invalid_argument(where + ": the receipt of " + r.webhook_id + " at the same moment as the one at " + it->second +
                                  ": a receipt given twice, not the receipts of a real run");
    }
    receipts.push_back(std::move(r));
  });
  if (!shift) throw std::invalid_argument(path + ": no {\"world\": ...} line: not the receipts of a relaysim world");
  return *shift;
}

// The serve processes' event logs, on the world's clock.
std::vector<std::vector<LogRecord>> read_logs(const std::vector<std::string>& paths, Duration shift) {
  struct Log {
    std::string path;
    std::vector<LogRecord> records;
  };
  std::vector<Log> read = read_event_logs<Log, LogChecker>(
      paths, read_record,
      [](const LogRecord& r, const std::string& where) {
        if (r.kind != LogKind::started && r.kind != LogKind::stopped && r.kind != LogKind::lookup &&
            r.kind != LogKind::breaker && r.id == 0) {
          throw std::invalid_argument(where + ": a " + std::string(to_string(r.kind)) + " of request 0");
        }
        // The checkers keep a breaker and a cache per pod.
        if (r.pod >= 1024) throw std::invalid_argument(where + ": pod numbers above 1023 are not judged");
      },
      [&](LogRecord& r, const std::string& where) {
        for (Time* t : {&r.at, &r.created_at, &r.deadline_at, &r.due_at, &r.sent_at, &r.ended_at}) {
          if (*t < kTimeZero) throw std::invalid_argument(where + ": a time before 1970 (Unix nanoseconds are never negative)");
          *t -= shift;
        }
        if (r.at < kTimeZero) {
          throw std::invalid_argument(where + ": '" + std::string(to_string(r.kind)) + "' " + format_duration(kTimeZero - r.at) +
                                      " before the world started: start relaysim world first");
        }
      });
  std::vector<std::vector<LogRecord>> logs;
  for (Log& log : read) {
    if (log.records.front().kind != LogKind::started) {
      throw std::invalid_argument(log.path + ": does not start with a 'started' line: not the event log of relaysim serve --events");
    }
    logs.push_back(std::move(log.records));
  }
  return logs;
}

// The client's create calls, on the world's clock.
std::vector<Call> read_calls(const std::string& path, Duration shift) {
  std::vector<Call> calls;
  std::unordered_map<std::string, std::string> seen;  // key@sent -> where
  each_line(path, "--calls", [&](const std::string& text, const std::string& where) {
    const json j = parse_object(text, where);
    Call c;
    c.cxid = field<std::string>(j, "cxid", where);
    c.request_id = field<std::string>(j, "request_id", where);
    c.key.cxid = cxid_index(c.cxid);
    c.key.request = field<std::uint64_t>(j, "key", where);
    c.key.name = c.key.request;
    const auto payload = j.find("payload");
    if (payload == j.end()) throw std::invalid_argument(where + ": no field 'payload'");
    c.key.payload = hash_bytes(stored_payload(*payload));
    c.sent = world_time(j, "sent_ns", shift, where);
    c.answered = world_time(j, "answered_ns", shift, where);
    c.status = field<int>(j, "status", where);
    if (c.status != 0 && (c.status < 100 || c.status > 599)) {
      throw std::invalid_argument(where + ": field 'status' is not an HTTP status (0: no answer): " + std::to_string(c.status));
    }
    if (j.contains("duplicate")) c.duplicate = field<bool>(j, "duplicate", where);
    if (j.contains("id") && !j["id"].is_null()) c.id = field<model::RequestId>(j, "id", where);
    if (c.answered < c.sent) throw std::invalid_argument(where + ": a call answered before it was sent");
    // A client sends one call of a key at one moment: the same call twice is a line given twice.
    if (const auto [it, added] = seen.emplace(std::to_string(c.key.request) + '@' + std::to_string(to_ns(c.sent)), where); !added) {
      throw std::invalid_argument(where + ": a call of key " + std::to_string(c.key.request) + " sent at the same moment as the one at " +
                                  it->second + ": a call given twice, not the calls of a real run");
    }
    calls.push_back(std::move(c));
  });
  return calls;
}

// Calls `each(id)` for every request the store holds in a status `which` takes, a page at a time.
template <class Which, class Each>
void each_stored(model::Store& store, Which which, Each each) {
  constexpr std::size_t kPage = 1024;
  for (int s = 0; s < model::kStatusCount; ++s) {
    const auto status = static_cast<model::Status>(s);
    if (!which(status)) continue;
    for (model::RequestId after = 0;;) {
      const std::vector<model::RequestId> ids = store.with_status(status, after, kPage);
      for (const model::RequestId id : ids) each(id);
      if (ids.size() < kPage) break;
      after = ids.back();
    }
  }
}

// A process killed between a create's commit and its log line leaves a request no log created:
// its create, from the store, in id order.
std::vector<LogRecord> creates_from_store(model::Store& store, const std::vector<std::vector<LogRecord>>& logs, Duration shift) {
  std::unordered_set<model::RequestId> logged;
  for (const std::vector<LogRecord>& log : logs) {
    for (const LogRecord& r : log) {
      if (r.kind == LogKind::ingested && r.outcome == model::CreateOutcome::created) logged.insert(r.id);
    }
  }
  std::vector<LogRecord> creates;
  each_stored(store, [](model::Status) { return true; }, [&](model::RequestId id) {
    if (logged.contains(id)) return;
    const std::optional<model::RequestRow> row = store.get(id);
    RELAYSIM_ASSERT(row.has_value(), "a request the store lists is in the store");
    LogRecord r;
    r.kind = LogKind::ingested;
    r.at = row->created_at - shift;
    r.id = id;
    r.cxid = row->cxid;
    r.request_id = row->request_id;
    r.created_at = row->created_at - shift;
    r.deadline_at = row->deadline_at - shift;
    creates.push_back(std::move(r));
  });
  std::sort(creates.begin(), creates.end(), [](const LogRecord& a, const LogRecord& b) { return a.id < b.id; });
  return creates;
}

// Requests the store holds terminal under a claim token no log names: their claim and completion
// committed together and their process died before logging either (Merger::end_after places them
// at that death).
std::vector<model::RequestRow> ended_unlogged(
    const std::vector<std::vector<LogRecord>>& logs, model::Store& store) {
  std::unordered_set<model::ClaimToken> logged;
  for (const std::vector<LogRecord>& log : logs) {
    for (const LogRecord& r : log) {
      if (r.kind == LogKind::claimed) logged.insert(r.token);
    }
  }
  std::vector<model::RequestRow> out;
  each_stored(store, model::is_terminal, [&](model::RequestId id) {
    std::optional<model::RequestRow> row = store.get(id);
    RELAYSIM_ASSERT(row.has_value(), "a request the store lists is in the store");
    if (row->claim_token != 0 && !logged.contains(row->claim_token)) out.push_back(std::move(*row));
  });
  return out;
}

// Every attempt: where it started, and how its claim ended — the attempt_finished (the HTTP
// result) and the completed (the result recorded) that followed in its process, or the crash of
// that process before them.
struct Attempt {
  std::uint32_t log;
  std::uint64_t start;
  std::uint64_t finish = kNone;
  std::uint64_t complete = kNone;
  std::uint64_t crashed = kNone;  // its process died with it unrecorded, after this record
};

// The run as one stream of the simulator's events (as Items), with what they refer to.
struct Stream {
  std::vector<Item> items;  // sorted
  std::vector<Attempt> attempts;
  std::vector<LogRecord> recovered;  // completions taken from the store
};

// The calls by what they create: cxid + '\n' + request_id -> calls, in order sent.
std::unordered_map<std::string, std::vector<std::size_t>> calls_by_request(const std::vector<Call>& calls) {
  std::unordered_map<std::string, std::vector<std::size_t>> calls_of;
  for (std::size_t i = 0; i < calls.size(); ++i) calls_of[calls[i].cxid + '\n' + calls[i].request_id].push_back(i);
  return calls_of;
}

// What the steps of merge share: the run's records, and the stream as it grows.
struct Merger {
  const std::vector<std::vector<LogRecord>>& logs;
  const std::vector<Call>& calls;
  model::Store& store;
  Duration shift;
  Judgement& out;
  Stream stream{};
  std::unordered_map<model::RequestId, std::vector<std::uint32_t>> attempts_of{};  // in attempts
  std::unordered_map<std::string, std::vector<std::size_t>> calls_of = calls_by_request(calls);
  std::vector<bool> call_bound = std::vector<bool>(calls.size(), false);
  std::vector<Time> created_after = std::vector<Time>(calls.size(), Time::min());
  const std::vector<std::vector<Time>> keys = places_in_time(logs);
  // Terminal requests whose last claim no log tells of (see end_after), and the deaths that could
  // have left each so.
  std::vector<model::RequestRow> unlogged_ends = ended_unlogged(logs, store);
  struct Death {
    std::uint32_t l;
    std::uint64_t last;
  };
  std::vector<std::vector<Death>> end_candidates = std::vector<std::vector<Death>>(unlogged_ends.size());

  // The claims this process holds, not completed yet: the token, and its attempt if it made one.
  struct Claim {
    model::ClaimToken token;
    std::uint32_t attempt;
  };
  // One log as the merge walks it, and the process running on it now.
  struct Walk {
    std::uint32_t l;
    bool up = false;
    std::unordered_map<model::RequestId, Claim> claims{};
    std::uint64_t stopped_at = kNone;  // the clean stop of the process before, when it left nothing open
    Time started_at = Time::min();     // the running process's
    model::ClaimToken last_token = 0;  // the last claim token it logged
  };

  void walk(std::uint32_t l);
  // `until`: when the next process on this log started (Time::max(): none did).
  void end_after(Walk& w, std::uint64_t last, bool killed, Time until = Time::max());
  void place_unlogged_ends();
  void lookup(std::uint32_t l, std::uint64_t s);
  void record(Walk& w, std::uint64_t s);
  std::size_t call_answered(const LogRecord& r) const;
  std::uint32_t carrier_of(const Receipt& receipt) const;
};

void Merger::walk(std::uint32_t l) {
  const std::vector<LogRecord>& log = logs[l];
  Walk w{l};
  for (std::uint64_t s = 0; s < log.size(); ++s) {
    const LogRecord& r = log[s];
    if (r.kind == LogKind::started && w.up) end_after(w, s - 1, true, r.at);
    if (r.kind == LogKind::started && !w.up && w.stopped_at != kNone) {
      // Started again after a clean stop: a new process, with a fresh breaker and cache.
      stream.items.push_back(
          {keys[l][w.stopped_at], l, w.stopped_at, 3, Item::What::stopped, static_cast<std::uint32_t>(w.stopped_at)});
    }
    if (r.kind == LogKind::started) {
      w.up = true;
      w.stopped_at = kNone;
      w.started_at = r.at;
      w.last_token = 0;
    }
    if (r.kind == LogKind::lookup) {
      lookup(l, s);
      continue;
    }
    stream.items.push_back({keys[l][s], l, s, 0, Item::What::record, static_cast<std::uint32_t>(s)});
    record(w, s);
  }
  if (w.up && !log.empty()) end_after(w, log.size() - 1, true);
}

// The process ends after record `last`: killed (it starts again without having stopped, or its
// log just ends), or stopped with claims still open (a drain that timed out). What it had in
// flight stays in flight: the checkers hear of it as of a crash. A claim the store holds
// terminal under its token was completed and the process died before logging it: that
// completion joins the stream from the store, just before the end.
void Merger::end_after(Walk& w, std::uint64_t last, bool killed, Time until) {
  if (!killed && w.claims.empty()) return;
  const std::uint32_t l = w.l;
  const std::vector<LogRecord>& log = logs[l];
  RELAYSIM_ASSERT(last < log.size(), "a process ends after a record of its log");
  std::vector<Attempt>& attempts = stream.attempts;
  std::vector<LogRecord>& recovered = stream.recovered;
  stream.items.push_back({keys[l][last], l, last, 3, Item::What::crashed, static_cast<std::uint32_t>(last)});
  if (killed) ++out.crashes;
  for (const auto& [id, claim] : w.claims) {
    if (claim.attempt != kNoAttempt) attempts[claim.attempt].crashed = last;
    const std::optional<model::RequestRow> row = killed ? store.get(id) : std::nullopt;
    if (!row || !model::is_terminal(row->status) || row->claim_token != claim.token) continue;
    LogRecord r;
    r.kind = LogKind::completed;
    r.pod = log[last].pod;
    r.at = row->terminal_at - shift;
    r.id = id;
    r.token = claim.token;
    r.number = claim.attempt != kNoAttempt ? logs[attempts[claim.attempt].log][attempts[claim.attempt].start].number : 0;
    r.status = row->status;
    r.reason = row->reason;
    r.due_at = row->due_at - shift;
    r.applied = true;
    stream.items.push_back({keys[l][last], l, last, 2, Item::What::recovered, static_cast<std::uint32_t>(recovered.size())});
    recovered.push_back(std::move(r));
  }
  w.claims.clear();
  // A claim that completed without an attempt (a deadline passed, a URL ServiceB does not hold)
  // can commit in the same group as its completion, and a process killed before that group's
  // lines were written leaves neither in its log. The store does not keep who made a finished
  // claim: it can only be a process killed after that moment that logged nothing from then on (a
  // group's lines are written in the order of the groups) and no later claim token (the database
  // hands tokens out in order). Each such death is a candidate; place_unlogged_ends() takes the
  // rows that have exactly one.
  if (!killed) return;
  const Time from = std::max(w.started_at, log[last].at);
  for (std::size_t i = 0; i < unlogged_ends.size(); ++i) {
    const model::RequestRow& row = unlogged_ends[i];
    const Time at = row.terminal_at - shift;
    if (at >= from && at < until && row.claim_token > w.last_token) end_candidates[i].push_back({l, last});
  }
}

// The unlogged claims and ends (see end_after) that one death alone can explain join the stream
// there. A row that none or several explain stays out: the store's count then differs from the
// platform's and the judge says so, rather than guess.
void Merger::place_unlogged_ends() {
  std::vector<LogRecord>& recovered = stream.recovered;
  for (std::size_t i = 0; i < unlogged_ends.size(); ++i) {
    if (end_candidates[i].size() != 1) continue;
    const model::RequestRow& row = unlogged_ends[i];
    const auto [l, last] = end_candidates[i].front();
    const Time at = row.terminal_at - shift;
    LogRecord claim;
    claim.kind = LogKind::claimed;
    claim.pod = logs[l][last].pod;
    claim.at = at;
    claim.id = row.id;
    claim.token = row.claim_token;
    claim.deadline_at = row.deadline_at - shift;
    LogRecord done = claim;
    done.kind = LogKind::completed;
    done.status = row.status;
    done.reason = row.reason;
    done.due_at = row.due_at - shift;
    done.applied = true;
    for (LogRecord* r : {&claim, &done}) {
      stream.items.push_back({keys[l][last], l, last, 2, Item::What::recovered, static_cast<std::uint32_t>(recovered.size())});
      recovered.push_back(std::move(*r));
    }
  }
}

// A lookup is logged when answered, judged when sent (the breaker's state then is what admitted
// it): after the last record of this log made by then, and at its own time.
void Merger::lookup(std::uint32_t l, std::uint64_t s) {
  RELAYSIM_ASSERT(l < logs.size() && s < logs[l].size(), "a record of a log");
  const LogRecord& r = logs[l][s];
  const auto first_later = std::upper_bound(keys[l].begin(), keys[l].begin() + static_cast<std::ptrdiff_t>(s), r.sent_at);
  const auto before = static_cast<std::uint64_t>(std::max<std::ptrdiff_t>(first_later - keys[l].begin(), 1) - 1);
  stream.items.push_back({std::max(keys[l][before], r.sent_at), l, before, 4, Item::What::lookup, static_cast<std::uint32_t>(s)});
  ++out.lookups;
}

// What record `s` of the walked log does to its process's claims and attempts, and the client
// call a create answers.
void Merger::record(Walk& w, std::uint64_t s) {
  const LogRecord& r = logs[w.l][s];
  std::vector<Attempt>& attempts = stream.attempts;
  switch (r.kind) {
    case LogKind::stopped:
      w.up = false;
      w.stopped_at = w.claims.empty() ? s : kNone;
      end_after(w, s, false);
      break;
    case LogKind::claimed:
      w.claims[r.id] = {r.token, kNoAttempt};
      w.last_token = std::max(w.last_token, r.token);
      break;
    case LogKind::attempt_started:
      if (const auto c = w.claims.find(r.id); c != w.claims.end()) {
        c->second.attempt = static_cast<std::uint32_t>(attempts.size());
      }
      attempts_of[r.id].push_back(static_cast<std::uint32_t>(attempts.size()));
      attempts.push_back({w.l, s, kNone, kNone, kNone});
      ++out.attempts;
      break;
    case LogKind::attempt_finished:
      if (const auto c = w.claims.find(r.id); c != w.claims.end() && c->second.attempt != kNoAttempt) {
        attempts[c->second.attempt].finish = s;
      }
      break;
    case LogKind::completed:
      if (const auto c = w.claims.find(r.id); c != w.claims.end() && c->second.token == r.token) {
        if (c->second.attempt != kNoAttempt) attempts[c->second.attempt].complete = s;
        w.claims.erase(c);
      }
      break;
    case LogKind::ingested: {
      if (r.outcome != model::CreateOutcome::created) break;
      ++out.acknowledged;
      const std::size_t bound = call_answered(r);
      if (bound == SIZE_MAX) break;
      const Time running = keys[w.l][s];
      call_bound[bound] = true;
      created_after[bound] = running;
      stream.items.push_back({running, w.l, s, -1, Item::What::calling, static_cast<std::uint32_t>(bound)});
      break;
    }
    default: break;
  }
}

// The client call the create `r` answers: the one told so (202, not a duplicate, this id); else
// one never answered that was under way then; else the first of its key. SIZE_MAX: none.
std::size_t Merger::call_answered(const LogRecord& r) const {
  const auto it = calls_of.find(r.cxid + '\n' + r.request_id);
  if (it == calls_of.end()) return SIZE_MAX;
  for (int pass = 0; pass < 3; ++pass) {
    for (const std::size_t c : it->second) {
      const Call& call = calls[c];
      const bool fits = pass == 0   ? call.status == 202 && !call.duplicate && call.id == r.id
                        : pass == 1 ? call.status == 0 && call.sent <= r.at + kClockSkew
                                    : true;
      if (!call_bound[c] && fits) return c;
    }
  }
  return SIZE_MAX;
}

// The attempt that carried `receipt`: one of its request's whose start and finish it lies
// between, within kClockSkew (its times are the world's clock, theirs the process's) — the
// latest started by then, else the first — and not one that says it sent nothing (a refused
// address, a bad URL, a lease that ended while it waited for its commit: such an attempt's span
// can overlap the next claim's). kNoAttempt: none.
std::uint32_t Merger::carrier_of(const Receipt& receipt) const {
  const std::vector<Attempt>& attempts = stream.attempts;
  const Time at = receipt.at;
  const auto it = attempts_of.find(model::request_id_from_webhook_id(receipt.webhook_id));
  std::uint32_t carrier = kNoAttempt;
  if (it == attempts_of.end()) return carrier;
  for (const std::uint32_t a : it->second) {
    const Time started = logs[attempts[a].log][attempts[a].start].at;
    const Time finished = attempts[a].finish == kNone ? kTimeNever : logs[attempts[a].log][attempts[a].finish].at;
    if (at + kClockSkew < started || at - kClockSkew > finished) continue;
    if (attempts[a].finish != kNone) {
      const NetError error = logs[attempts[a].log][attempts[a].finish].error;
      if (error == NetError::too_late || error == NetError::forbidden_address || error == NetError::bad_url) continue;
    }
    if (carrier == kNoAttempt || (started <= at && started > logs[attempts[carrier].log][attempts[carrier].start].at)) {
      carrier = a;
    }
  }
  return carrier;
}

Stream merge(const std::vector<std::vector<LogRecord>>& logs, const std::vector<Receipt>& receipts,
             const std::vector<Call>& calls, model::Store& store, Duration shift, Judgement& out) {
  Merger m{logs, calls, store, shift, out};
  std::vector<Item>& items = m.stream.items;
  for (std::uint32_t l = 0; l < logs.size(); ++l) m.walk(l);
  m.place_unlogged_ends();
  out.recovered += m.stream.recovered.size();
  for (std::uint32_t c = 0; c < calls.size(); ++c) {
    if (calls[c].status == 0) continue;  // never answered: nothing was said to the client
    items.push_back({std::max(calls[c].answered, m.created_after[c]), Item::kFree, c, 0, Item::What::created, c});
  }
  // Each receipt hangs on the attempt that carried it (carrier_of).
  for (std::uint32_t i = 0; i < receipts.size(); ++i) {
    const std::uint32_t carrier = m.carrier_of(receipts[i]);
    if (carrier == kNoAttempt) {
      // Sent by nobody who logged it: judged as it arrived, from a pod of its own.
      items.push_back({receipts[i].at, Item::kFree, i, 0, Item::What::sent, i, kNoAttempt});
    } else {
      const Attempt& a = m.stream.attempts[carrier];
      items.push_back({m.keys[a.log][a.start], a.log, a.start, 1, Item::What::sent, i, carrier});
    }
  }
  out.receipts = receipts.size();
  std::sort(items.begin(), items.end());
  return std::move(m.stream);
}

// The scenario as the run played it: the world's, a webhook system's, with the platform the
// serve configuration ran.
sim::Scenario scenario_as_run(const JudgeInputs& in) {
  sim::Scenario scenario = sim::load_scenario(in.scenario);
  const ServeConfig config = read_serve_config(in.config);
  if (dynamic_cast<const sw::WebhookSpec*>(&scenario.spec()) == nullptr) {
    throw std::invalid_argument(in.scenario + ": relaysim judge judges webhook runs (system: webhook)");
  }
  // The platform as it ran: the serve configuration's policies. The world's own faults of the
  // store and crashes are the simulator's; a live run's crashes are read from its logs.
  sw::WebhookSpec& spec = sw::spec_of(scenario);
  spec.platform = config.platform;
  scenario.crashes.clear();
  scenario.store_faults.clear();
  return scenario;
}

// Refuses a --database that is not one relaysim serve left, or that is too old to judge.
void check_database(const std::string& path) {
  const DbInspection db = inspect_database(path);
  if (!db.holds({"requests", "attempts"})) {
    throw std::invalid_argument("--database: " + path + " is not a database relaysim serve left" +
                                (!db.exists ? ": no such file" : db.is_directory ? ": a directory" : !db.is_sqlite ? " (" + db.error + ")" : ""));
  }
  // The store opened as serve opens it adds what an older schema lacks; the judge reads, never
  // writes, so a database from before a column it needs is refused instead.
  if (!db.has_table("notices")) {
    throw std::invalid_argument("--database: " + path +
                                " was left by an older relaysim serve (it has no outbox of tenants' notices); the judge "
                                "does not change a database: judge it with the relaysim that served it");
  }
  const std::vector<std::string>& attempt_columns = db.columns.at("attempts");
  if (std::find(attempt_columns.begin(), attempt_columns.end(), "detail") == attempt_columns.end()) {
    throw std::invalid_argument("--database: " + path +
                                " was left by an older relaysim serve (its attempts have no detail column); the judge "
                                "does not change a database: judge it with the relaysim that served it");
  }
}

// The checkers index client keys densely, as the simulator's load numbers them: the client's
// own numbers are renumbered in their order (a gap in them would cost memory, not meaning).
// `name` keeps the client's number, for messages. A receipt's key no call sent is none of them.
void renumber_keys(std::vector<Call>& calls, std::vector<Receipt>& receipts) {
  std::map<std::uint64_t, std::uint64_t> dense;
  for (const Call& c : calls) dense.emplace(c.key.request, 0);
  std::uint64_t n = 0;
  for (auto& [key, number] : dense) number = ++n;
  for (Call& c : calls) c.key.request = dense[c.key.request];
  for (Receipt& r : receipts) {
    const auto it = dense.find(r.key);
    r.key = it != dense.end() ? it->second : ++n;
  }
}

// The run as read, on the world's clock, and merged.
struct Run {
  std::vector<Receipt> receipts;
  std::string base;  // where the world served
  std::vector<std::vector<LogRecord>> logs;
  std::vector<Call> calls;
  model::StoreCounts stored{};  // what the run left: the judge reads, never writes
  std::vector<model::Notice> outbox;  // the notices the run left unsent, on the world's clock
  Stream stream{};
};

// Hands the merged stream's events to the checkers: what each kind of event needs.
struct Replay {
  const Run& run;
  const sw::WebhookSpec& spec;
  const sw::ServiceB& serviceb;
  sw::RequestChecker& requests;
  sw::BreakerChecker& breakers;
  sw::Metrics& metrics;
  Judgement& out;
  // What the metrics read of a request's row that no one record carries: when it was created,
  // its attempts so far and its replays.
  struct RowFacts {
    Time created_at{};
    std::uint32_t attempts = 0;
    std::uint32_t replays = 0;
  };
  std::unordered_map<model::RequestId, RowFacts> facts{};
  std::vector<BreakerState> final_breakers = std::vector<BreakerState>(spec.platform.pods, BreakerState::closed);
  Time end = kTimeZero;

  // An event to the request checker, and to the metrics when they count it.
  template <class E>
  void emit(const E& e) {
    requests.on(e);
    if constexpr (std::is_base_of_v<SinkFor<E>, sw::Metrics>) metrics.on(e);
  }
  void record(const LogRecord& r);
  void lookup(const LogRecord& r);
  void ended(const LogRecord& r, bool killed);
  void created(const Call& c, Time at);
  void sent(const Item& item);
};

// A serve record, logged or recovered from the store.
void Replay::record(const LogRecord& r) {
  end = std::max(end, r.at);
  // The row the platform's event carried, as far as the checkers read it.
  model::RequestRow row;
  row.id = r.id;
  row.deadline_at = r.deadline_at;
  row.claim_token = r.token;
  RowFacts* f = r.id != 0 ? &facts[r.id] : nullptr;
  if (f != nullptr) {
    if (r.kind == LogKind::ingested && r.outcome == model::CreateOutcome::created) f->created_at = r.created_at;
    row.created_at = f->created_at;
    row.attempts = f->attempts;
    row.replays = f->replays;
  }
  switch (r.kind) {
    case LogKind::started: emit(sim::ProcessStarted{r.pod, r.at}); break;
    case LogKind::stopped: break;
    case LogKind::ingested: {
      const model::NewRequest request{r.cxid, r.request_id, {}, r.created_at, r.deadline_at};
      const model::CreateResult result{r.outcome, r.id};
      emit(model::Ingested{r.pod, request, result, r.at});
      break;
    }
    case LogKind::claimed: emit(model::Claimed{r.pod, row, r.at}); break;
    case LogKind::attempt_started:
      emit(model::AttemptStarted{r.pod, row, r.number, sim_url(r.url, run.base), r.version, r.at});
      break;
    case LogKind::attempt_finished: {
      model::AttemptRow attempt;
      attempt.request = r.id;
      attempt.number = r.number;
      attempt.pod = r.pod;
      attempt.finished_at = r.at;
      const HttpResult result{r.error, r.http_status, r.retry_after, {}};
      emit(model::AttemptFinished{r.pod, attempt, result, model::Verdict::retry});
      break;
    }
    case LogKind::completed: {
      model::AttemptRow attempt;
      attempt.request = r.id;
      attempt.number = r.number;
      model::Completion c;
      c.attempt = r.number != 0 ? &attempt : nullptr;
      c.status = r.status;
      c.reason = r.reason;
      c.at = r.at;
      c.due_at = r.due_at;
      emit(model::Completed{r.pod, row, c, r.applied, r.failed});
      if (r.applied && r.number != 0) f->attempts = std::max(f->attempts, r.number);
      break;
    }
    case LogKind::notified: {
      const model::Notice n{r.notice, r.id, r.life, r.sends, r.status, r.reason, r.ended_at};
      emit(model::TenantNotified{r.pod, n, r.at});
      break;
    }
    case LogKind::replayed:
      emit(model::Replayed{r.pod, r.id, r.replay, r.deadline_at, r.at});
      if (r.replay == model::ReplayOutcome::replayed) ++f->replays;
      break;
    case LogKind::breaker:
      RELAYSIM_ASSERT(r.pod < final_breakers.size(), "the checkers count pods up to the highest logged");
      breakers.on(model::BreakerChanged{r.pod, r.from, r.to, r.at});
      metrics.on(model::BreakerChanged{r.pod, r.from, r.to, r.at});
      final_breakers[r.pod] = r.to;
      ++out.breaker_changes;
      break;
    case LogKind::lookup: break;  // a lookup item
  }
}

void Replay::lookup(const LogRecord& r) {
  end = std::max(end, r.at);
  const sw::ServiceBCalled called{r.pod, cxid_index(r.cxid), r.sent_at, r.at, r.lookup != model::LookupStatus::error,
                                  serviceb.in_outage(r.sent_at), r.lookup == model::LookupStatus::found ? r.version : 0};
  emit(called);
  breakers.on(called);
}

// To the checkers, a process that ends is a pod that dies.
void Replay::ended(const LogRecord& r, bool killed) {
  RELAYSIM_ASSERT(r.pod < final_breakers.size(), "the checkers count pods up to the highest logged");
  // To the checkers a process's end is a crash either way (what it held is rescued by others);
  // the metrics count only the kills as crashes.
  const sim::ProcessCrashed crashed{r.pod, died_after(r)};
  requests.on(crashed);
  if (killed) metrics.on(crashed);
  breakers.on(crashed);
  final_breakers[r.pod] = BreakerState::closed;
}

void Replay::created(const Call& c, Time at) {
  end = std::max(end, c.answered);
  model::IngestResult result;
  result.id = c.id;
  result.status = c.status == 202 ? (c.duplicate ? model::IngestStatus::duplicate : model::IngestStatus::created)
                  : c.status == 200 ? model::IngestStatus::duplicate
                  : c.status == 409 ? model::IngestStatus::conflict
                  : c.status == 503 ? model::IngestStatus::unavailable
                                    : model::IngestStatus::invalid;
  emit(sw::ClientCreated{c.key, result, at});
}

void Replay::sent(const Item& item) {
  RELAYSIM_ASSERT(item.index < run.receipts.size(), "a receipt of the world's");
  const Receipt& rc = run.receipts[item.index];
  end = std::max(end, rc.at);
  sw::SendFate fate;
  fate.endpoint = rc.endpoint;
  fate.processed = true;
  fate.status = rc.status;
  fate.received_at = rc.at;
  fate.result_at = rc.at;
  fate.response_lost = !rc.answered;
  std::uint32_t pod = 0;
  Time at = rc.at;
  if (item.attempt != kNoAttempt) {
    // The attempt is in flight until its result is recorded (or its process dies first):
    // a pod that dies after the answer came and before it recorded it leaves it ambiguous.
    const Attempt& a = run.stream.attempts[item.attempt];
    const std::vector<LogRecord>& log = run.logs[a.log];
    pod = log[a.start].pod;
    at = log[a.start].at;
    if (a.finish != kNone) fate.client_error = log[a.finish].error;
    fate.result_at = a.complete != kNone ? log[a.complete].at
                     : a.crashed != kNone ? died_after(log[a.crashed]) + kAfter
                     : a.finish != kNone ? log[a.finish].at
                                         : rc.at + spec.platform.http_timeout;
  }
  emit(sw::HttpSent{pod, model::request_id_from_webhook_id(rc.webhook_id), fate, at, rc.url, rc.webhook_id,
                           rc.key, rc.payload});
}

// The merged stream handed to the simulator's checkers, and the store's final counts to their
// end-of-run checks.
void check_run(sim::Scenario& scenario, const Run& run, Judgement& out) {
  const std::vector<Item>& items = run.stream.items;
  // The checkers allow a run with crashes the lease on top of their deadline bound (what a dead
  // pod had in flight waits for its lease to run out): this run's crashes are what its logs show.
  for (const Item& item : items) {
    if (item.what != Item::What::crashed) continue;
    scenario.crashes.push_back({died_after(run.logs[item.log][item.index]), 0, Duration{}, false});
  }

  // The world as the simulator knows it, and the checkers.
  const sw::WebhookSpec& spec = sw::spec_of(scenario);
  sw::ServiceB serviceb(spec.serviceb, spec.cxid_count(), spec.endpoint_count(), scenario.seed);
  sim::Kernel kernel;
  serviceb.install(kernel);
  const sim::StoreFaults no_faults(scenario);
  sw::RequestChecker requests(scenario, serviceb, no_faults, std::nullopt, out.ledger);
  sw::BreakerChecker breakers(scenario, serviceb, out.ledger);
  out.figures.metrics = sw::Metrics(spec.platform.pods);
  Replay replay{run, spec, serviceb, requests, breakers, out.figures.metrics, out};

  // The backlog, sampled as a simulated run's is (sim/report/backlog.h): requests acknowledged and
  // not terminal, each second of the world's time, for the drain after each fault.
  const sw::Metrics& counted = out.figures.metrics;
  const auto open_now = [&counted] {
    const std::uint64_t opened = counted.acked + counted.replays[static_cast<int>(model::ReplayOutcome::replayed)];
    return opened - std::min(opened, counted.terminal_requests);
  };
  sim::BacklogTrace backlog(std::max(scenario.duration, items.empty() ? Duration{} : items.back().key - kTimeZero));
  for (const Item& item : items) {
    while (backlog.next() <= item.key) backlog.take(open_now(), 0);
    // ServiceB's URL versions as of now, for the checkers' messages.
    if (item.key > kernel.now()) kernel.run_until(item.key);
    switch (item.what) {
      case Item::What::record: replay.record(run.logs[item.log][item.index]); break;
      case Item::What::recovered: replay.record(run.stream.recovered[item.index]); break;
      case Item::What::lookup: replay.lookup(run.logs[item.log][item.index]); break;
      case Item::What::crashed: replay.ended(run.logs[item.log][item.index], true); break;
      case Item::What::stopped: replay.ended(run.logs[item.log][item.index], false); break;
      case Item::What::calling: replay.emit(sw::ClientCalling{run.calls[item.index].key, item.key}); break;
      case Item::What::created: replay.created(run.calls[item.index], item.key); break;
      case Item::What::sent: replay.sent(item); break;
    }
  }
  while (backlog.next() <= replay.end) backlog.take(open_now(), 0);
  out.drains = backlog.drains(sw::world_timeline(spec, counted.transitions));
  requests.finish(replay.end, run.stored, run.outbox);
  breakers.finish(replay.end, replay.final_breakers);
  for (int c = 0; c < sw::kDuplicateCauseCount; ++c) {
    const auto cause = static_cast<sw::DuplicateCause>(c);
    if (requests.duplicates(cause) > 0) out.duplicates.emplace_back(std::string(sw::to_string(cause)), requests.duplicates(cause));
  }
  out.retry_after_honoured = requests.retry_after_honoured();
  out.terminal_bound = requests.terminal_bound_text();
  // The run's figures, as the simulator reports its own (sim/webhook/metrics.h). Utilisation needs
  // the pods' busy slot-time, which no log says: it is left unknown.
  sw::Figures& f = out.figures;
  for (int c = 0; c < sw::kDuplicateCauseCount; ++c) {
    f.oracle.duplicates[static_cast<std::size_t>(c)] = requests.duplicates(static_cast<sw::DuplicateCause>(c));
  }
  f.oracle.rescued = requests.rescued_claims();
  f.oracle.stale = requests.stale_completions();
  f.oracle.stale_applied = requests.stale_applied();
  f.oracle.retry_after_honoured = requests.retry_after_honoured();
  f.oracle.lost = requests.lost();
  for (std::size_t i = 0; i < f.violations.size(); ++i) f.violations[i] = out.ledger.count(i);
  for (int st = 0; st < static_cast<int>(model::Status::delivered); ++st) f.unresolved += run.stored.by_status[st];
  f.busy_s = std::numeric_limits<double>::quiet_NaN();
  f.slot_s = std::numeric_limits<double>::quiet_NaN();
  f.end = replay.end;
}

}  // namespace

Judgement judge(const JudgeInputs& in) {
  Judgement out;
  out.ledger = sim::Ledger(sw::kInvariants);
  sim::Scenario scenario = scenario_as_run(in);

  Run run;
  const Duration shift = read_receipts(in.receipts, scenario, run.receipts, run.base);  // the world's clock
  run.logs = read_logs(in.events, shift);
  model::PodId max_pod = 0;
  for (const std::vector<LogRecord>& log : run.logs) {
    for (const LogRecord& r : log) max_pod = std::max(max_pod, r.pod);
  }
  sw::spec_of(scenario).platform.pods = max_pod + 1;  // live pods are numbered from 1; the checkers index by number

  // The store the processes shared: the truth of what was committed.
  check_database(in.database);
  model::SqliteStore store(in.database);
  // What a killed process committed and never logged joins the stream from the store: its
  // creates as a log of no process's (placed by id), its completions (in merge) before its crash.
  run.logs.push_back(creates_from_store(store, run.logs, shift));
  out.recovered += run.logs.back().size();
  run.calls = read_calls(in.calls, shift);
  out.calls = run.calls.size();
  renumber_keys(run.calls, run.receipts);
  run.stored = store.counts();
  run.outbox = store.notices();
  for (model::Notice& n : run.outbox) n.at -= shift;
  if (run.calls.empty() && run.stored.by_status != decltype(model::StoreCounts::by_status){}) {
    throw std::invalid_argument("--calls: " + in.calls + " holds no calls, but the store holds requests: the judge needs "
                                "the client's calls (docs/live.md)");
  }
  run.stream = merge(run.logs, run.receipts, run.calls, store, shift, out);
  check_run(scenario, run, out);
  return out;
}

}  // namespace relaysim::live::webhook
