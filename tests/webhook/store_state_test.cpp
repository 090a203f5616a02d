// Stateful tests of the Store contract (model/webhook/store.h) on both stores: random sequences of
// create, duplicate create, claim (of all waiting work or all but the blocked), claim of expired work, completion under the current and under a
// stale token, lease expiry, dead-letter and replay, each checked against a simple model.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <map>
#include <optional>
#include <string>

#include "model/webhook/memory_store.h"
#include "model/webhook/sqlite_store.h"

namespace relaysim::webhook {
namespace {

using namespace std::chrono;
constexpr Duration kLease = seconds(10);

struct ModelRow {
  std::string key;
  std::string payload;
  Status status = Status::pending;
  Time due{};
  Time deadline{};
  std::uint32_t attempts = 0;
};

struct Model {
  Time now = Time{} + seconds(1);
  std::map<RequestId, ModelRow> rows;  // ids are 1, 2, ... in creation order
  std::map<std::string, RequestId> keys;

  bool active(const ModelRow& r) const { return !is_terminal(r.status); }
  bool claimable(const ModelRow& r, Claimable which) const {
    return active(r) && (which == Claimable::all || r.status != Status::blocked);
  }
  // What claim_due must return: the earliest (due, id) among claimable rows.
  std::optional<RequestId> due_now(Claimable which) const {
    std::optional<RequestId> best;
    for (const auto& [id, r] : rows) {
      if (!claimable(r, which) || r.due > now) continue;
      if (!best || r.due < rows.at(*best).due) best = id;
    }
    return best;
  }
  std::optional<RequestId> expired_now() const {
    std::optional<RequestId> best;
    for (const auto& [id, r] : rows) {
      if (r.status != Status::pending && r.status != Status::blocked) continue;
      if (r.deadline >= now) continue;
      if (!best || r.deadline < rows.at(*best).deadline) best = id;
    }
    return best;
  }
  std::optional<Time> next_due(Claimable which) const {
    std::optional<Time> t;
    for (const auto& [id, r] : rows) {
      if (claimable(r, which) && (!t || r.due < *t)) t = r.due;
    }
    return t;
  }
};

struct Sut {
  Store& store;
  std::map<RequestId, ClaimToken> current;  // the token of each row's latest claim
  std::map<RequestId, ClaimToken> stale;    // a superseded token, when there is one
};

using Command = rc::state::Command<Model, Sut>;

struct Create final : Command {
  std::string cxid = *rc::gen::element<std::string>("cx0", "cx1");
  std::string rid = *rc::gen::element<std::string>("r0", "r1", "r2");
  std::string payload = *rc::gen::element<std::string>("{}", "{\"a\":1}");
  Duration deadline = seconds(*rc::gen::inRange(5, 120));
  void apply(Model& m) const override {
    const std::string key = cxid + "/" + rid;
    if (m.keys.count(key) != 0) return;
    const RequestId id = m.rows.size() + 1;
    m.keys[key] = id;
    m.rows[id] = ModelRow{key, payload, Status::pending, m.now, m.now + deadline, 0};
  }
  void run(const Model& m, Sut& s) const override {
    const CreateResult r = s.store.create({cxid, rid, payload, m.now, m.now + deadline});
    const auto it = m.keys.find(cxid + "/" + rid);
    if (it == m.keys.end()) {
      RC_ASSERT(r.outcome == CreateOutcome::created);
      RC_ASSERT(r.id == m.rows.size() + 1);
    } else {
      RC_ASSERT(r.id == it->second);
      RC_ASSERT(r.outcome == (m.rows.at(it->second).payload == payload ? CreateOutcome::duplicate : CreateOutcome::conflict));
    }
  }
  void show(std::ostream& os) const override { os << "create(" << cxid << ", " << rid << ", " << payload << ")"; }
};

struct Advance final : Command {
  Duration by = seconds(*rc::gen::inRange(1, 40));
  void apply(Model& m) const override { m.now += by; }
  void run(const Model&, Sut&) const override {}
  void show(std::ostream& os) const override { os << "advance " << format_duration(by); }
};

template <bool kExpired>
struct Claim final : Command {
  Claimable which = *rc::gen::element(Claimable::all, Claimable::unblocked);
  void apply(Model& m) const override {
    const auto id = kExpired ? m.expired_now() : m.due_now(which);
    if (!id) return;
    ModelRow& r = m.rows.at(*id);
    r.status = Status::in_flight;
    r.due = m.now + kLease;
  }
  void run(const Model& m, Sut& s) const override {
    RequestRow row;
    const bool got = kExpired ? s.store.claim_expired(m.now, 1, kLease, row) : s.store.claim_due(m.now, 1, kLease, row, which);
    const auto want = kExpired ? m.expired_now() : m.due_now(which);
    RC_ASSERT(got == want.has_value());
    if (!got) return;
    RC_ASSERT(row.id == *want);
    RC_ASSERT(row.status == Status::in_flight);
    if (s.current.count(row.id) != 0) {
      RC_ASSERT(row.claim_token > s.current[row.id]);
      s.stale[row.id] = s.current[row.id];
    }
    s.current[row.id] = row.claim_token;
  }
  void show(std::ostream& os) const override {
    os << (kExpired ? "claim_expired" : which == Claimable::all ? "claim_due" : "claim_due(unblocked)");
  }
};

struct Complete final : Command {
  explicit Complete(const Model& m) {
    std::vector<RequestId> in_flight;
    for (const auto& [row_id, r] : m.rows) {
      if (r.status == Status::in_flight) in_flight.push_back(row_id);
    }
    RC_PRE(!in_flight.empty());
    id = *rc::gen::elementOf(in_flight);
    status = *rc::gen::element(Status::pending, Status::blocked, Status::delivered, Status::failed, Status::dead_lettered);
    delay = seconds(*rc::gen::inRange(0, 30));
    with_attempt = status != Status::blocked && *rc::gen::arbitrary<bool>();
    use_stale = *rc::gen::arbitrary<bool>();
  }
  RequestId id = 0;
  Status status{};
  Duration delay{};
  bool with_attempt = false;
  bool use_stale = false;

  void checkPreconditions(const Model& m) const override {
    RC_PRE(m.rows.count(id) != 0 && m.rows.at(id).status == Status::in_flight);
  }
  void apply(Model& m) const override {
    // A completion under a stale token changes nothing; the run step decides which one it is,
    // so the model applies only current-token completions (see run()).
    if (use_stale) return;
    ModelRow& r = m.rows.at(id);
    r.status = status;
    r.due = m.now + delay;
    if (with_attempt) ++r.attempts;
  }
  void run(const Model& m, Sut& s) const override {
    AttemptRow a{id, m.rows.at(id).attempts + 1, 1, 0, m.now, m.now, "http://x", 1, NetError::none, 503, {}};
    const Completion c{with_attempt ? &a : nullptr, status, Reason::none, m.now, m.now + delay, m.now, {}};
    if (use_stale) {
      const ClaimToken token = s.stale.count(id) != 0 ? s.stale[id] : s.current[id] + 1000;  // never current
      RC_ASSERT(!s.store.complete(id, token, c));
      RC_ASSERT(s.store.get(id)->status == Status::in_flight);
      return;
    }
    a.claim_token = s.current[id];
    RC_ASSERT(s.store.complete(id, s.current[id], c));
    const auto row = s.store.get(id);
    RC_ASSERT(row->status == status);
    RC_ASSERT(row->attempts == m.rows.at(id).attempts + (with_attempt ? 1u : 0u));
    RC_ASSERT(s.store.attempts(id).size() == row->attempts);
    RC_ASSERT(!s.store.complete(id, s.current[id], c));  // never twice
  }
  void show(std::ostream& os) const override {
    os << "complete(" << id << " -> " << to_string(status) << (with_attempt ? ", attempt" : "")
       << (use_stale ? ", stale token" : "") << ")";
  }
};

struct Replay final : Command {
  RequestId id = static_cast<RequestId>(*rc::gen::inRange(1, 8));
  void apply(Model& m) const override {
    auto it = m.rows.find(id);
    if (it == m.rows.end() || !is_terminal(it->second.status)) return;
    it->second.status = Status::pending;
    it->second.due = m.now;
    it->second.deadline = m.now + seconds(60);
  }
  void run(const Model& m, Sut& s) const override {
    const ReplayOutcome r = s.store.replay(id, m.now, m.now + seconds(60));
    auto it = m.rows.find(id);
    if (it == m.rows.end()) RC_ASSERT(r == ReplayOutcome::not_found);
    else RC_ASSERT(r == (is_terminal(it->second.status) ? ReplayOutcome::replayed : ReplayOutcome::not_terminal));
  }
  void show(std::ostream& os) const override { os << "replay(" << id << ")"; }
};

struct CheckNextExpiry final : Command {
  void apply(Model&) const override {}
  void run(const Model& m, Sut& s) const override {
    std::optional<Time> want;
    for (const auto& [id, r] : m.rows) {
      if ((r.status == Status::pending || r.status == Status::blocked) && (!want || r.deadline < *want)) want = r.deadline;
    }
    RC_ASSERT(s.store.next_expiry() == want);
  }
  void show(std::ostream& os) const override { os << "next_expiry"; }
};

struct CheckNextDue final : Command {
  Claimable which = *rc::gen::element(Claimable::all, Claimable::unblocked);
  void apply(Model&) const override {}
  void run(const Model& m, Sut& s) const override { RC_ASSERT(s.store.next_due(which) == m.next_due(which)); }
  void show(std::ostream& os) const override { os << (which == Claimable::all ? "next_due" : "next_due(unblocked)"); }
};

void check_store(Store& store) {
  Sut sut{store, {}, {}};
  rc::state::check(Model{}, sut,
                   rc::state::gen::execOneOfWithArgs<Create, Create, Advance, Claim<false>, Claim<true>, Complete,
                                                     Complete, Replay, CheckNextDue,
                                                     CheckNextExpiry>());
}

RC_GTEST_PROP(StoreState, MemoryStoreFollowsTheModel, ()) {
  MemoryStore store;
  check_store(store);
}

RC_GTEST_PROP(StoreState, SqliteStoreFollowsTheModel, ()) {
  SqliteStore store(":memory:");
  check_store(store);
}

}  // namespace
}  // namespace relaysim::webhook
