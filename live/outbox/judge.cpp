#include "live/outbox/judge.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "live/json_api.h"
#include "live/clock.h"
#include "live/json_record.h"
#include "live/outbox/config.h"
#include "live/outbox/event_log.h"
#include "live/serve_file.h"
#include "model/core/assert.h"
#include "sim/loader.h"
#include "sim/outbox/invariants.h"
#include "sim/outbox/oracle.h"
#include "sim/outbox/spec.h"

namespace relaysim::live::outbox {

namespace {

using nlohmann::json;
namespace so = sim::outbox;

// How far past a shard's last message a logged id may go (a message a log committed that the
// shard lost), and a partition's offsets past the records the logs' publishes carried (per life:
// the records of publishes in flight when a process was killed, which no line tells of): past
// these, the logs are not of this run's shards and log (and following them would cost the oracle
// memory for every id and offset below).
constexpr std::uint64_t kIdsPastStoredAtMost = 10'000;
constexpr std::uint64_t kOffsetsUnloggedPerLifeAtMost = 100'000;

// The judge's one tolerance: two pods' clocks disagree by less than this (live/clock.h), so
// their records may stand out of their true order by as much.
constexpr Duration kClockSkew = kClockReadError;

// The run's clock: Unix times less the world's start. Nothing of the run comes before it; a time
// of 0 is a field the event leaves unset, and stays 0.
struct RunClock {
  Duration start{};
  Time of(Time unix_time, const char* name, const std::string& where) const {
    if (unix_time == Time{}) return Time{};
    constexpr Duration kLatest = Duration::max() - std::chrono::hours(24 * 366 * 10);
    if (unix_time.time_since_epoch() > kLatest) throw std::invalid_argument(where + ": '" + name + "' is past any real run's time");
    return world_time(unix_time, name, start, where);
  }
};

// An effect the world's downstream applied, as its receipts tell it.
struct Effect {
  Time at{};
  model::Record record;
};

RunClock read_world(const std::string& path, const sim::Scenario& scenario, const OutboxServeConfig& config,
                    std::vector<Effect>& out) {
  std::optional<Duration> started;
  each_line(path, "--receipts", [&](const std::string& text, const std::string& where) {
    const json j = parse_object(text, where);
    if (const auto w = j.find("world"); w != j.end()) {
      if (started) throw std::invalid_argument(where + ": a second world's log: judge one world's run at a time");
      started = world_started(*w, scenario.name, scenario.seed, "outbox", "the outbox relay's", where);
      return;
    }
    if (!started) throw std::invalid_argument(where + ": no world line before it: the log does not start as world writes it");
    const auto at = field<std::int64_t>(j, "at_ns", where);
    if (at < 0 || Duration{at} > Duration::max() / 4) throw std::invalid_argument(where + ": 'at_ns' is not a time of the run");
    // A handling the downstream never saw arrive (a timeout, an outage) has no effect.
    if (!j.contains("applied") || field<std::uint64_t>(j, "applied", where) == 0) return;
    Effect e;
    e.at = Time{Duration{at}};
    e.record.shard = field<model::ShardId>(j, "shard", where);
    e.record.id = field<model::RowId>(j, "id", where);
    e.record.attempt = field<std::uint16_t>(j, "attempt", where);
    e.record.key = field<model::EntityKey>(j, "key", where);
    e.record.version = field<std::uint64_t>(j, "version", where);
    e.record.fence = field<model::FenceToken>(j, "fence", where);
    if (e.record.shard >= config.platform.shards) {
      throw std::invalid_argument(where + ": shard " + std::to_string(e.record.shard) + ": the relay has " +
                                  std::to_string(config.platform.shards));
    }
    if (e.record.id == 0) throw std::invalid_argument(where + ": message ids count from 1");
    if (e.record.attempt == 0) throw std::invalid_argument(where + ": a record of attempt 0: attempts count from 1");
    out.push_back(e);
  });
  if (!started) throw std::invalid_argument("--receipts: " + path + " is empty: no world wrote it");
  std::stable_sort(out.begin(), out.end(), [](const Effect& a, const Effect& b) { return a.at < b.at; });
  return RunClock{*started};
}

struct Log {
  std::string path;
  std::vector<LogRecord> records;
};

// The shard, partition and pod of a record, and the ids it names, checked against the relay's.
void check_ranges(const LogRecord& r, const OutboxServeConfig& config, const std::string& where) {
  const auto refuse = [&](const std::string& what) { throw std::invalid_argument(where + ": " + what); };
  if (r.pod == 0 || r.pod > config.platform.pods) {
    refuse("pod " + std::to_string(r.pod) + ": the relay's pods are numbered from 1 to " +
           std::to_string(config.platform.pods) + " (platform.pods, serve --pod)");
  }
  if (r.shard >= config.platform.shards) {
    refuse("shard " + std::to_string(r.shard) + ": the relay has " + std::to_string(config.platform.shards));
  }
  if (r.partition >= config.partitions) {
    refuse("partition " + std::to_string(r.partition) + ": the log has " + std::to_string(config.partitions) +
           " (serve.partitions)");
  }
  for (const LogEntry& e : r.records) {
    if (e.record.shard >= config.platform.shards) refuse("a record of shard " + std::to_string(e.record.shard));
    if (e.record.id == 0) refuse("a record of message 0: ids count from 1");
    // A record carries the attempt its message is processing under, counted from 1.
    if (e.record.attempt == 0) refuse("a record of attempt 0: attempts count from 1");
  }
  for (const LogMessage& m : r.messages) {
    if (m.row.id == 0) refuse("a row of message 0: ids count from 1");
  }
}

std::vector<Log> read_logs(const std::vector<std::string>& paths, const OutboxServeConfig& config, const RunClock& clock) {
  return read_event_logs<Log, LogChecker>(
      paths, read_record, [&](const LogRecord& r, const std::string& where) { check_ranges(r, config, where); },
      [&](LogRecord& r, const std::string& where) {
        r.at = clock.of(r.at, "at", where);
        r.logged = clock.of(r.logged, "logged", where);
        r.until = clock.of(r.until, "until", where);
        r.started = clock.of(r.started, "started", where);
        r.next_attempt = clock.of(r.next_attempt, "next_attempt", where);
        for (LogMessage& m : r.messages) {
          m.row.created_at = clock.of(m.row.created_at, "created_at", where);
          m.row.next_attempt = clock.of(m.row.next_attempt, "next_attempt", where);
        }
        for (LogEntry& e : r.records) e.record.created_at = clock.of(e.record.created_at, "created_at", where);
      });
}

// Where a record is: log and line index.
struct At {
  std::uint32_t log = 0;
  std::uint32_t index = 0;
};

// A stretch of a process's life in which it may have committed a change no line tells of (each
// line is written when its change has committed): after its last line, when it was killed (its
// log starts again without `stopped` before, or ends without it), until it started again; or a
// call to a shard's database that failed for want of an answer (`store_failed`, io or other: the
// COMMIT may have reached PostgreSQL, which then restarted), from its line before to that line.
struct Life {
  model::PodId pod = 0;
  bool killed = false;  // a kill; else a failed call
  Time end{};                  // its last line's before the stretch
  Time restart = Time::max();  // the stretch's end
  // The shards it could write to as their leader then, with its tokens: those it led, and those
  // it stepped down from in the middle of a cycle (a leader finishes its cycle's mark after it
  // steps down, and only the fence keeps that write out: model/outbox/relay.cpp, cycle_done).
  std::map<model::ShardId, model::FenceToken> leads;
  // A failed call's stretch: the shard the call was to, the only one it may have changed.
  std::optional<model::ShardId> only;
};

// A process's leaderships along its log, for Life::leads. `marks_after_publishing`: the relay
// marks a cycle's rows once they are published (else its scan marked them, and nothing is left to
// write when it steps down).
struct Leaderships {
  bool marks_after_publishing = false;
  std::map<model::ShardId, model::FenceToken> writes;  // Life::leads
  std::set<model::ShardId> leading;
  std::set<model::ShardId> cycling;  // a scan took rows, and no mark of them followed yet

  void see(const LogRecord& r) {
    if (r.kind == LogKind::leadership) {
      if (r.leading) {
        leading.insert(r.shard);
        writes[r.shard] = r.token;
      } else {
        leading.erase(r.shard);
        if (!cycling.contains(r.shard)) writes.erase(r.shard);
      }
    } else if (r.kind == LogKind::leader_wrote) {
      // A shard's cycles follow one another: a scan ends the last (whether or not it marked
      // anything: every publish may have failed, or the mark's call), and starts one if it took rows.
      if (r.write == model::LeaderWrite::scan) {
        cycling.erase(r.shard);
        if (marks_after_publishing && r.applied && !r.messages.empty()) cycling.insert(r.shard);
      }
      if (r.write == model::LeaderWrite::mark) {
        cycling.erase(r.shard);
        if (!leading.contains(r.shard)) writes.erase(r.shard);
      }
    }
  }
};

// Every such stretch of the logs' processes, in the order they began.
std::vector<Life> lives_of(const std::vector<Log>& logs, const model::RelayConfig& relay) {
  const bool marks_after_publishing = relay.order == model::PublishOrder::publish_then_mark;
  std::vector<Life> lives;
  for (const Log& log : logs) {
    std::optional<Life> life;  // the process's current life, until it stops
    Leaderships led{marks_after_publishing, {}, {}, {}};
    for (const LogRecord& r : log.records) {
      if (r.kind == LogKind::started) {
        if (life) {
          life->killed = true;
          life->restart = r.logged;
          life->leads = led.writes;
          lives.push_back(*life);
        }
        life = Life{r.pod, false, r.logged, Time::max(), {}, std::nullopt};
        led = Leaderships{marks_after_publishing, {}, {}, {}};
        continue;
      }
      if (!life) continue;  // LogChecker: every log starts with `started`
      if (r.kind == LogKind::store_failed && (r.failure == StoreFailure::io || r.failure == StoreFailure::other)) {
        Life failed{r.pod, false, life->end, r.logged + kClockSkew, {}, r.shard};
        if (const auto w = led.writes.find(r.shard); w != led.writes.end()) failed.leads.insert(*w);
        lives.push_back(std::move(failed));
      }
      life->end = r.logged;
      led.see(r);
      if (r.kind == LogKind::stopped) life.reset();
    }
    if (life) {
      life->killed = true;
      life->leads = led.writes;
      lives.push_back(*life);
    }
  }
  std::sort(lives.begin(), lives.end(), [](const Life& a, const Life& b) { return a.end < b.end; });
  return lives;
}

// The killed life (or failed call) that could have committed a change to `shard` before `before` —
// the latest, whose pod could write to `shard` as its leader at its end when `leader` — or nullptr.
const Life* killer(const std::vector<Life>& killed, Time before, bool leader, model::ShardId shard) {
  for (auto l = killed.rbegin(); l != killed.rend(); ++l) {
    if (l->end >= before || (l->only && *l->only != shard)) continue;
    if (!leader || l->leads.contains(shard)) return &*l;
  }
  return nullptr;
}

// A message's state, ranked along its life: pending after N attempts is 2N+1 (1: just committed),
// processing under attempt N is 2N, final after attempt N is 2N+1. Each change of state comes
// after the change that made the state it changed.
constexpr std::uint32_t pending_after(std::uint32_t attempt) { return 2 * attempt + 1; }
constexpr std::uint32_t processing_under(std::uint32_t attempt) { return 2 * attempt; }

// Hands the records to the oracle's checkers in the order described in judge.h.
class Replay {
 public:
  // `rows`: each shard's messages as the run left them.
  Replay(std::vector<Log>& logs, const std::vector<Effect>& effects, const std::vector<Life>& killed,
         const std::vector<std::vector<model::Message>>& rows, const model::RelayConfig& relay, model::Events& model,
         so::WorldEvents& world, sim::CoordinatorBus& coordinator, so::Oracle& oracle, Judgement& out)
      : logs_(logs), effects_(effects), killed_(killed), relay_(relay), model_(model), world_(world),
        coordinator_(coordinator), oracle_(oracle), out_(out), next_(logs.size(), 0), pulling_(logs.size(), false) {
    for (model::ShardId s = 0; s < rows.size(); ++s) {
      for (const model::Message& m : rows[s]) rows_at_end_.emplace(model::MessageRef{s, m.id}.packed(), &m);
    }
    index();
  }

  // Replays everything; returns the time of the last record.
  Time run() {
    std::size_t effect = 0;
    for (;;) {
      std::optional<std::uint32_t> first;
      Time when = Time::max();
      for (std::uint32_t l = 0; l < logs_.size(); ++l) {
        if (next_[l] < logs_[l].records.size() && logs_[l].records[next_[l]].logged < when) {
          when = logs_[l].records[next_[l]].logged;
          first = l;
        }
      }
      if (effect < effects_.size() && (!first || effects_[effect].at <= when)) {
        applied(effects_[effect++]);
      } else if (first) {
        advance(*first, next_[*first]);
      } else {
        break;
      }
    }
    return end_;
  }

  // After the run: a message the shard holds in a later state than the logs brought it to was
  // moved by a process killed before it logged the move (none: a log was left out, and the run is
  // refused); then the row is held to what the logs made of it (a final message unchanged, no
  // move at one attempt its lifecycle lacks).
  void reconcile(model::ShardId shard, const model::Message& row) {
    const model::MessageRef m{shard, row.id};
    const std::uint32_t target =
        row.status == model::Status::processing ? processing_under(row.attempt) : pending_after(row.attempt);
    const auto it = reached_.find(m.packed());
    if (it == reached_.end()) return;
    if (it->second < target && !recover(m, row, end_ + Duration{1}, row.status == model::Status::processing, true)) {
      throw std::invalid_argument("shard " + std::to_string(shard) + " holds message " + std::to_string(row.id) + " " +
                                  std::string(model::to_string(row.status)) + " at attempt " + std::to_string(row.attempt) +
                                  ", a change no log tells of, and no process was killed (nor a call to the shard left "
                                  "unanswered) then (give every serve process's log, of this run's shards)");
    }
    oracle_.held(m, row, end_ + Duration{1});
  }

 private:
  // Every change of a message's state, and every leader write, by where it is.
  void index() {
    for (std::uint32_t l = 0; l < logs_.size(); ++l) {
      const std::vector<LogRecord>& records = logs_[l].records;
      for (std::uint32_t i = 0; i < records.size(); ++i) {
        const LogRecord& r = records[i];
        const At at{l, i};
        switch (r.kind) {
          case LogKind::operation:
            if (!r.committed) break;
            for (std::uint32_t k = 0; k < r.types.size(); ++k) {
              const std::uint64_t m = model::MessageRef{r.shard, r.first + k}.packed();
              changes_[m].emplace(pending_after(0), at);
              std::vector<std::uint64_t>& of_key = by_key_[r.key];
              of_key.insert(std::upper_bound(of_key.begin(), of_key.end(), m), m);
            }
            break;
          case LogKind::leader_wrote:
            if (!r.applied) break;
            writes_[{r.shard, l}].push_back(i);
            for (const LogMessage& m : r.messages) {
              const std::uint64_t ref = model::MessageRef{r.shard, m.row.id}.packed();
              if (const std::optional<std::uint32_t> to = changed_to(r.write, m.row)) changes_[ref].emplace(*to, at);
              if (model::is_final(m.row.status)) finals_.try_emplace(ref, at);
            }
            break;
          case LogKind::finished:
            if (!r.applied) break;
            changes_[r.records[0].record.ref().packed()].emplace(pending_after(r.records[0].record.attempt), at);
            if (model::is_final(r.status)) finals_.try_emplace(r.records[0].record.ref().packed(), at);
            break;
          default:
            break;
        }
      }
    }
  }

  // The state a leader write left a row in, when it changed the row (changed_by, event_log.h).
  static std::optional<std::uint32_t> changed_to(model::LeaderWrite write, const model::Message& row) {
    if (!changed_by(write, row)) return std::nullopt;
    return row.status == model::Status::processing ? processing_under(row.attempt) : pending_after(row.attempt);
  }

  // The state a record about message `m` needs it to have reached first, if any.
  static std::optional<std::uint32_t> needs(const LogRecord& r, const model::Message& row) {
    if (r.kind != LogKind::leader_wrote) return std::nullopt;
    switch (r.write) {
      case model::LeaderWrite::fence:
        return std::nullopt;
      case model::LeaderWrite::rescue:
        return processing_under(row.attempt);
      case model::LeaderWrite::scan:
      case model::LeaderWrite::mark:
        // Made processing under N: it was pending after N - 1. Read pending: after its attempts.
        return row.status == model::Status::processing ? pending_after(row.attempt - (row.attempt > 0 ? 1 : 0))
                                                       : pending_after(row.attempt);
    }
    return std::nullopt;
  }

  bool done(const At& at) const { return next_[at.log] > at.index; }

  // Brings log `l` up to its record `index`, that record included, unless it is the log being
  // replayed or one being brought up already (each log keeps its order).
  void pull(const At& at, std::uint32_t from) {
    if (at.log == from || pulling_[at.log] || done(at)) return;
    ++out_.pulled;
    advance(at.log, at.index);
  }

  // Pulls the change that brought message `m` to state `state`, when another log tells of it and
  // it began before `before`, when the record that needs it was written (a change begun after
  // cannot have come first: the oracle judges the record without it).
  void pull_state(model::MessageRef m, std::uint32_t state, std::uint32_t from, Time before) {
    const auto it = changes_.find(m.packed());
    if (it == changes_.end()) return;
    const auto [first, last] = it->second.equal_range(state);
    for (auto c = first; c != last; ++c) {
      if (done(c->second)) return;
    }
    if (first != last && record(first->second).at < before + kClockSkew) pull(first->second, from);
  }

  const LogRecord& record(const At& at) const { return logs_[at.log].records[at.index]; }

  // When the logs bring message `m` to no state `state` before a record written at `before` needs
  // it, the change is taken from the killed life that could have made it (a leader's, for a
  // processing state), as the store would have it then; none: the oracle judges the record as
  // it stands.
  void require(model::MessageRef m, std::uint32_t state, Time before) {
    const auto it = reached_.find(m.packed());
    if (it == reached_.end() || it->second >= state || killed_.empty()) return;
    // A log tells of the change, later: the record came before it, and the oracle says so.
    if (const auto c = changes_.find(m.packed()); c != changes_.end() && c->second.contains(state)) return;
    model::Message now;
    now.id = m.id;
    now.status = state % 2 == 0 ? model::Status::processing : model::Status::pending;
    now.attempt = static_cast<std::uint16_t>(state / 2);
    recover(m, now, before, now.status == model::Status::processing, false);
  }

  // `now`: the state to recover. Its times, unless `known` (the store's row at the end), are set
  // from the killed life's end, the earliest the change could have been: a processing message's
  // timeout and a pending one's next attempt no later than the store's, so that no rescue or scan
  // after is judged early for them.
  // Whether a killed life could have made it.
  bool recover(model::MessageRef m, model::Message now, Time before, bool leader, bool known) {
    const Life* life = killer(killed_, before, leader, m.shard);
    if (life == nullptr) return false;
    if (!known) now.next_attempt = life->end + (now.status == model::Status::processing ? relay_.processing_timeout : Duration{});
    oracle_.recovered(m, now, life->end);
    if (model::is_final(now.status)) final_.insert(m.packed());
    reached_[m.packed()] = now.status == model::Status::processing ? processing_under(now.attempt) : pending_after(now.attempt);
    ++out_.recovered;
    return true;
  }

  // Per-key ordering: a message is scanned, and its effect applied, only once every earlier
  // message of its entity is final. So each earlier one's final change comes first: from the log
  // that tells of it, or, when none does, from the killed life that made it, as the shard holds it.
  void earlier_final(model::MessageRef m, model::EntityKey key, Time before, std::uint32_t from) {
    if (relay_.ordering != model::Ordering::per_key) return;
    const auto of_key = by_key_.find(key);
    if (of_key == by_key_.end()) return;
    // Past the entity's messages known final, in order: each is looked at until it is.
    std::size_t& cursor = final_up_to_[key];
    for (std::size_t i = cursor; i < of_key->second.size(); ++i) {
      const std::uint64_t earlier = of_key->second[i];
      if (earlier >= m.packed()) break;
      if (!final_.contains(earlier)) {
        const auto f = finals_.find(earlier);
        if (f != finals_.end() && record(f->second).at < before + kClockSkew) pull(f->second, from);
        const auto row = rows_at_end_.find(earlier);
        if (!final_.contains(earlier) && f == finals_.end() && row != rows_at_end_.end() &&
            model::is_final(row->second->status)) {
          recover(model::MessageRef::unpack(earlier), *row->second, before, false, true);
        }
      }
      if (i == cursor && final_.contains(earlier)) ++cursor;
    }
  }

  void reach(model::MessageRef m, std::uint32_t state) {
    std::uint32_t& reached = reached_[m.packed()];
    reached = std::max(reached, state);
  }

  void advance(std::uint32_t l, std::uint32_t through) {
    pulling_[l] = true;
    while (next_[l] <= through && next_[l] < logs_[l].records.size()) {
      const LogRecord& r = logs_[l].records[next_[l]];
      before(l, r);
      ++next_[l];
      replay(r);
    }
    pulling_[l] = false;
  }

  // What must be replayed before `r`, from the other logs.
  void before(std::uint32_t l, const LogRecord& r) {
    switch (r.kind) {
      case LogKind::leader_wrote:
        if (!r.applied) return;
        // Writes under smaller tokens that began before this one was logged may have committed
        // before it: the last of each other log's (and its log up to it).
        for (std::uint32_t x = 0; x < logs_.size(); ++x) {
          if (x == l) continue;
          const auto w = writes_.find({r.shard, x});
          if (w == writes_.end()) continue;
          std::optional<std::uint32_t> last;
          for (auto i = std::lower_bound(w->second.begin(), w->second.end(), next_[x]); i != w->second.end(); ++i) {
            const LogRecord& other = logs_[x].records[*i];
            if (other.at >= r.logged + kClockSkew) break;
            if (other.token < r.token) last = *i;
          }
          if (last) pull(At{x, *last}, l);
        }
        for (const LogMessage& m : r.messages) {
          const model::MessageRef ref{r.shard, m.row.id};
          pull_state(ref, pending_after(0), l, r.logged);
          if (const std::optional<std::uint32_t> state = needs(r, m.row)) {
            pull_state(ref, *state, l, r.logged);
            require(ref, *state, r.logged);
          }
          if (r.write == model::LeaderWrite::scan) earlier_final(ref, m.row.key, r.logged, l);
        }
        return;
      case LogKind::appended:
      case LogKind::deduped:
        pull_state(r.records[0].record.ref(), pending_after(0), l, r.logged);
        return;
      case LogKind::relocked:
        pull_state(r.records[0].record.ref(), pending_after(0), l, r.logged);
        if (r.relock == model::Relock::locked) {
          pull_state(r.records[0].record.ref(), processing_under(r.records[0].record.attempt), l, r.logged);
          require(r.records[0].record.ref(), processing_under(r.records[0].record.attempt), r.logged);
        }
        return;
      case LogKind::finished:
        pull_state(r.records[0].record.ref(), pending_after(0), l, r.logged);
        if (r.applied) {
          pull_state(r.records[0].record.ref(), processing_under(r.records[0].record.attempt), l, r.logged);
          require(r.records[0].record.ref(), processing_under(r.records[0].record.attempt), r.logged);
        }
        return;
      default:
        return;
    }
  }

  void replay(const LogRecord& r) {
    end_ = std::max({end_, r.at, r.logged});
    switch (r.kind) {
      case LogKind::started:
      case LogKind::stopped:
        return;
      case LogKind::operation:
        if (r.committed) {
          ++out_.committed;
          out_.messages += r.types.size();
          for (std::uint32_t k = 0; k < r.types.size(); ++k) reach({r.shard, r.first + k}, pending_after(0));
        } else {
          ++out_.rolled_back;
        }
        model_.emit(model::OperationDone{r.pod, r.shard, r.key, r.version, r.first, r.types, r.committed, r.at});
        return;
      case LogKind::leadership:
        model_.emit(model::LeadershipChanged{r.pod, r.shard, r.token, r.leading, r.at, r.until});
        return;
      case LogKind::leader_wrote: {
        rows_.clear();
        for (const LogMessage& m : r.messages) rows_.push_back(m.row);
        if (r.applied) {
          ++out_.leader_writes;
          for (const LogMessage& m : r.messages) {
            if (const std::optional<std::uint32_t> to = changed_to(r.write, m.row)) reach({r.shard, m.row.id}, *to);
            if (model::is_final(m.row.status)) final_.insert(model::MessageRef{r.shard, m.row.id}.packed());
          }
        } else {
          ++out_.fenced_out;
        }
        model_.emit(model::LeaderWrote{r.pod, r.shard, r.token, r.write, r.applied, rows_, r.at});
        return;
      }
      case LogKind::published: {
        records_.clear();
        for (const LogEntry& e : r.records) records_.push_back(e.record);
        model_.emit(model::Published{r.pod, r.shard, r.producer, r.partition, r.sequence, records_, r.produced, r.attempt, r.at});
        return;
      }
      case LogKind::appended:
        ++out_.appended;
        world_.emit(so::LogAppended{r.partition, r.offset, r.records[0].record, r.producer, r.sequence, r.at});
        return;
      case LogKind::deduped:
        world_.emit(so::LogDeduped{r.partition, r.records[0].record, r.producer, r.sequence, r.same, r.at});
        return;
      case LogKind::relocked: {
        const model::Delivery delivery{r.partition, r.offset, r.records[0].record};
        model_.emit(model::Relocked{r.pod, delivery, r.relock, r.messages[0].row, r.at});
        return;
      }
      case LogKind::handled:
        model_.emit(model::HandleDone{r.pod, r.records[0].record, r.handled, r.started, r.at});
        return;
      case LogKind::finished: {
        const model::Finish finish{r.status, r.reason, r.next_attempt, r.at};
        if (r.applied) reach(r.records[0].record.ref(), pending_after(r.records[0].record.attempt));
        if (r.applied && model::is_final(r.status)) final_.insert(r.records[0].record.ref().packed());
        model_.emit(model::Finished{r.pod, r.records[0].record, finish, r.applied, r.at});
        return;
      }
      case LogKind::consumed:
        model_.emit(model::Consumed{r.pod, r.partition, r.offset, r.at});
        return;
      case LogKind::committed:
        model_.emit(model::OffsetsCommitted{r.pod, r.generation, r.partition, r.offset, r.at});
        return;
      case LogKind::polled:
        model_.emit(model::Polled{r.pod, r.count, r.evicted, r.at});
        return;
      case LogKind::store_failed:
        model_.emit(model::StoreFailed{r.pod, r.shard, r.failure, r.at});
        return;
      case LogKind::granted:
        coordinator_.emit(sim::LeaseGranted{r.lease, r.holder, r.token, r.renewed, r.until, r.at});
        return;
      case LogKind::commit_answered:
        world_.emit(so::GroupCommitted{r.partition, r.offset, r.member, r.applied, r.at});
        return;
    }
  }

  void applied(const Effect& e) {
    // The effect came after its message's operation and the write that made it processing under
    // the attempt (the consumer re-locked it so before handing it on).
    pull_state(e.record.ref(), pending_after(0), kNoLog, e.at);
    pull_state(e.record.ref(), processing_under(e.record.attempt), kNoLog, e.at);
    require(e.record.ref(), processing_under(e.record.attempt), e.at);
    earlier_final(e.record.ref(), e.record.key, e.at, kNoLog);
    end_ = std::max(end_, e.at);
    ++out_.effects;
    world_.emit(so::EffectApplied{e.record, 0, e.at});
  }

  static constexpr std::uint32_t kNoLog = ~std::uint32_t{0};

  std::vector<Log>& logs_;
  const std::vector<Effect>& effects_;
  const std::vector<Life>& killed_;
  const model::RelayConfig& relay_;
  model::Events& model_;
  so::WorldEvents& world_;
  sim::CoordinatorBus& coordinator_;
  so::Oracle& oracle_;
  Judgement& out_;
  // Per message (packed ref): the furthest state the replay brought it to, and whether it is final.
  std::unordered_map<std::uint64_t, std::uint32_t> reached_;
  std::unordered_set<std::uint64_t> final_;
  // Per message: where the change that made it final is; its row at the end.
  std::unordered_map<std::uint64_t, At> finals_;
  std::unordered_map<std::uint64_t, const model::Message*> rows_at_end_;
  // Per entity: its messages, in id order (per-key ordering holds within an entity's shard), and
  // how many of the first are known final.
  std::unordered_map<model::EntityKey, std::vector<std::uint64_t>> by_key_;
  std::unordered_map<model::EntityKey, std::size_t> final_up_to_;
  std::vector<std::uint32_t> next_;  // per log: its next record
  std::vector<bool> pulling_;        // per log: being brought up to a record another needs first
  // Per message (packed ref): each change of its state, by the state it made, in log order.
  std::unordered_map<std::uint64_t, std::multimap<std::uint32_t, At>> changes_;
  // Per shard and log: the lines of the leader writes that took effect, in the log's order.
  std::map<std::pair<model::ShardId, std::uint32_t>, std::vector<std::uint32_t>> writes_;
  std::vector<model::Message> rows_;
  std::vector<model::Record> records_;
  Time end_{};
};

}  // namespace

sim::Scenario scenario_as_run(const std::string& scenario_path, const OutboxServeConfig& config) {
  sim::Scenario scenario = sim::load_scenario(scenario_path);
  if (dynamic_cast<const so::OutboxSpec*>(&scenario.spec()) == nullptr) {
    throw std::invalid_argument(scenario_path + ": the serve configuration is the outbox relay's, but the scenario's system is not outbox");
  }
  so::OutboxSpec& spec = so::spec_of(scenario);
  spec.platform = config.platform;
  spec.log.partitions = config.partitions;
  spec.log.session_timeout = config.session_timeout;
  spec.log.max_poll_interval = config.max_poll_interval;
  return scenario;
}

Judgement judge(const sim::Scenario& scenario, const OutboxServeConfig& config, const std::vector<std::string>& events,
                const std::string& receipts, const std::function<ShardsAtEnd()>& open_shards) {
  Judgement out;
  out.ledger = sim::Ledger(so::kInvariants);
  std::vector<Effect> effects;
  const RunClock clock = read_world(receipts, scenario, config, effects);
  std::vector<Log> logs = read_logs(events, config, clock);
  out.processes = static_cast<std::uint32_t>(logs.size());

  // Each record a partition holds was written by a publish: its offsets stay under the records
  // the publishes carried. (No overflow: both counts are bounded by the lines read.)
  std::uint64_t published = 0;
  std::uint64_t lives = 0;
  for (const Log& log : logs) {
    for (const LogRecord& r : log.records) {
      if (r.kind == LogKind::published) published += r.records.size();
      if (r.kind == LogKind::started) ++lives;
    }
  }
  const std::uint64_t last_offset = published + lives * kOffsetsUnloggedPerLifeAtMost;
  for (const Log& log : logs) {
    for (const LogRecord& r : log.records) {
      if (r.offset > last_offset) {
        throw std::invalid_argument(log.path + " names offset " + std::to_string(r.offset) + ", but the logs' publishes "
                                    "carried " + std::to_string(published) + " records: the logs are not of one run");
      }
    }
  }

  const std::vector<Life> killed = lives_of(logs, config.platform);
  out.crashes = static_cast<std::uint64_t>(std::count_if(killed.begin(), killed.end(), [](const Life& l) { return l.killed; }));

  // The shards as the run left them, each message's row on the run's clock.
  ShardsAtEnd at_end = open_shards();
  RELAYSIM_ASSERT(at_end.stores.size() == config.platform.shards && at_end.rows.size() == config.platform.shards,
                  "one store and one set of rows per shard");
  const std::vector<model::Store*>& shards = at_end.stores;
  std::vector<std::vector<model::Message>>& rows = at_end.rows;
  for (model::ShardId s = 0; s < rows.size(); ++s) {
    const std::string where = "shard " + std::to_string(s) + "'s database";
    for (model::Message& m : rows[s]) {
      // What no relay writes (a row edited by hand, another program's table) is refused, not judged.
      const auto refuse = [&](const std::string& what) {
        throw std::invalid_argument(where + ": message " + std::to_string(m.id) + " " + what + ": no relay wrote this row");
      };
      if (m.id == 0) refuse("has id 0");
      if (static_cast<int>(m.status) >= model::kStatusCount) refuse("has status " + std::to_string(static_cast<int>(m.status)));
      if (static_cast<int>(m.reason) >= model::kReasonCount) refuse("has reason " + std::to_string(static_cast<int>(m.reason)));
      if (m.type >= config.platform.types.size()) {
        refuse("has type " + std::to_string(m.type) + ", and the relay has " + std::to_string(config.platform.types.size()));
      }
      m.created_at = clock.of(m.created_at, "created_at", where);
      m.next_attempt = clock.of(m.next_attempt, "next_attempt", where);
    }
  }
  // A message no log tells of was committed by a process killed before its line: its operation
  // joins the replay at the row's time, as a log of its own. One that no killed life can explain
  // means a log was left out.
  std::vector<std::unordered_set<model::RowId>> logged(rows.size());
  for (const Log& log : logs) {
    for (const LogRecord& r : log.records) {
      if (r.kind != LogKind::operation || !r.committed) continue;
      for (std::uint32_t k = 0; k < r.types.size(); ++k) logged[r.shard].insert(r.first + k);
    }
  }
  Log unlogged{"the shards' databases", {}};
  for (model::ShardId s = 0; s < rows.size(); ++s) {
    for (const model::Message& m : rows[s]) {
      if (logged[s].contains(m.id)) continue;
      const auto life = std::find_if(killed.rbegin(), killed.rend(),
                                     [&](const Life& l) {
                                       return l.end <= m.created_at && m.created_at < l.restart && (!l.only || *l.only == s);
                                     });
      if (life == killed.rend()) {
        throw std::invalid_argument("shard " + std::to_string(s) + " holds message " + std::to_string(m.id) + ", committed at " +
                                    format_time(m.created_at) + ", but no log tells of it, and no process was killed then " +
                                    "(give every serve process's log, of this run's shards)");
      }
      LogRecord r;
      r.kind = LogKind::operation;
      r.pod = life->pod;
      r.at = r.logged = m.created_at;
      r.shard = s;
      r.key = m.key;
      r.version = m.version;
      r.first = m.id;
      r.types = {m.type};
      r.committed = true;
      unlogged.records.push_back(std::move(r));
      ++out.recovered;
    }
  }
  if (!unlogged.records.empty()) {
    std::stable_sort(unlogged.records.begin(), unlogged.records.end(),
                     [](const LogRecord& a, const LogRecord& b) { return a.logged < b.logged; });
    logs.push_back(std::move(unlogged));
  }
  // Ids no run of these shards reaches (see kIdsPastStoredAtMost).
  std::vector<model::RowId> last_id(rows.size(), 0);
  for (model::ShardId s = 0; s < rows.size(); ++s) last_id[s] = rows[s].empty() ? 0 : rows[s].back().id;
  const auto refuse_id = [&](model::ShardId shard, model::RowId id, const std::string& where) {
    if (id > last_id[shard] && id - last_id[shard] > kIdsPastStoredAtMost) {
      throw std::invalid_argument(where + " names message " + std::to_string(id) + " of shard " + std::to_string(shard) +
                                  ", whose last message is " + std::to_string(last_id[shard]) +
                                  ": the logs are not of these shards' run");
    }
  };
  for (const Log& log : logs) {
    for (const LogRecord& r : log.records) {
      if (r.kind == LogKind::operation) {
        refuse_id(r.shard, r.first, log.path);
        refuse_id(r.shard, r.first + r.types.size(), log.path);  // no overflow: the first is bounded, and a line's length
      }
      const model::ShardId rows_shard = r.kind == LogKind::relocked ? r.records[0].record.shard : r.shard;
      for (const LogMessage& m : r.messages) refuse_id(rows_shard, m.row.id, log.path);
      for (const LogEntry& e : r.records) refuse_id(e.record.shard, e.record.id, log.path);
    }
  }
  for (const Effect& e : effects) refuse_id(e.record.shard, e.record.id, receipts);

  model::Events model;
  so::WorldEvents world;
  sim::CoordinatorBus coordinator;
  so::Oracle oracle(scenario, out.ledger, sim::Judged::live);
  oracle.attach(model, world);
  oracle.attach(coordinator);
  Replay replay(logs, effects, killed, rows, config.platform, model, world, coordinator, oracle, out);
  const Time end = replay.run();
  for (model::ShardId s = 0; s < rows.size(); ++s) {
    for (const model::Message& m : rows[s]) replay.reconcile(s, m);
  }
  oracle.finish(end, shards);

  for (int c = 0; c < so::kDuplicateCauseCount; ++c) {
    const auto cause = static_cast<so::DuplicateCause>(c);
    if (const std::uint64_t n = oracle.duplicates(cause); n > 0) out.duplicates.emplace_back(std::string(to_string(cause)), n);
  }
  return out;
}

}  // namespace relaysim::live::outbox
