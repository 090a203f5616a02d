#include "tests/property/sms_store_properties.h"

#include <rapidcheck.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/sms/memory_store.h"
#include "model/sms/sqlite_store.h"

namespace relaysim::sms_store_props {

using namespace relaysim::sms;
using std::chrono::seconds;

namespace {

constexpr Duration kLease = seconds(10);
constexpr std::uint64_t kQuota = 6;

enum class OpKind : std::uint8_t { accept, claim, complete, receipt, advance, revoke, approve };

struct Op {
  OpKind kind = OpKind::advance;
  BusinessId business = 1;
  bool stale_epoch = false;
  std::vector<std::pair<std::string, std::string>> keys;  // (biz_type, biz_id)
  std::uint64_t content = 1;
  Duration send_in{};
  PodId pod = 0;          // accept: claim for this pod (0: no); claim: the claimant
  std::size_t pick = 0;   // complete: which claim handed out (< 30: the newest); receipt: which id
  Status status = Status::pending;
  bool attempted = false;
  bool accepted = false;
  bool delivered = false;
  Duration by{};
};

std::ostream& operator<<(std::ostream& os, const Op& op) {
  switch (op.kind) {
    case OpKind::accept:
      os << "accept(b" << op.business << (op.stale_epoch ? ", stale" : "") << ", content " << op.content << ", in "
         << format_duration(op.send_in) << ", claim_for " << op.pod << ":";
      for (const auto& [t, i] : op.keys) os << " " << t << "/" << i;
      return os << ")";
    case OpKind::claim: return os << "claim(pod " << op.pod << ")";
    case OpKind::complete:
      return os << "complete(claim #" << op.pick << " -> " << to_string(op.status) << (op.attempted ? ", attempted" : "")
                << (op.accepted ? ", accepted" : "") << ", due in " << format_duration(op.send_in) << ")";
    case OpKind::receipt: return os << "receipt(#" << op.pick << (op.delivered ? ", delivered)" : ", undelivered)");
    case OpKind::advance: return os << "advance " << format_duration(op.by);
    case OpKind::revoke: return os << "revoke(b" << op.business << ")";
    case OpKind::approve: return os << "approve(b" << op.business << ")";
  }
  return os;
}

rc::Gen<Op> gen_op() {
  return rc::gen::exec([] {
    Op op;
    op.kind = *rc::gen::weightedElement<OpKind>({{6, OpKind::accept}, {5, OpKind::claim}, {5, OpKind::complete},
                                                 {2, OpKind::receipt}, {3, OpKind::advance}, {1, OpKind::revoke},
                                                 {1, OpKind::approve}});
    op.business = *rc::gen::inRange<BusinessId>(1, 3);
    op.stale_epoch = *rc::gen::weightedElement<bool>({{9, false}, {1, true}});
    const int n = *rc::gen::weightedElement<int>({{6, 1}, {2, 2}, {1, 3}});
    const std::string type = *rc::gen::element<std::string>("otp", "notice");
    const std::string id = std::to_string(*rc::gen::inRange(0, 5));
    for (int i = 0; i < n; ++i) {
      // A bulk request's keys; now and then one key twice.
      const bool twice = i > 0 && *rc::gen::weightedElement<bool>({{9, false}, {1, true}});
      op.keys.emplace_back(type, n == 1 ? id : id + "#" + std::to_string(twice ? i - 1 : i));
    }
    op.content = *rc::gen::inRange<std::uint64_t>(1, 3);
    op.send_in = seconds(*rc::gen::element(0, 0, 5, 20));
    op.pod = *rc::gen::inRange<PodId>(op.kind == OpKind::claim ? 1 : 0, 3);
    op.pick = *rc::gen::inRange<std::size_t>(0, 40);
    op.status = *rc::gen::element(Status::pending, Status::unknown, Status::submitted, Status::failed,
                                  Status::unconfirmed, Status::suppressed);
    op.attempted = *rc::gen::arbitrary<bool>();
    op.accepted = op.status == Status::submitted || op.status == Status::unconfirmed || *rc::gen::arbitrary<bool>();
    op.delivered = *rc::gen::arbitrary<bool>();
    op.by = seconds(*rc::gen::inRange(1, 25));
    return op;
  });
}

struct ModelRow {
  BusinessId business = 0;
  std::string type, id;
  std::uint64_t content = 0;
  Status status = Status::pending;
  Time due{};
  ClaimToken token = 0;
  std::uint16_t attempts = 0;
  bool charged = true;
  bool accepted = false;
};

struct Model {
  Time now = Time{} + seconds(1);
  std::map<MessageId, ModelRow> rows;  // ids 1, 2, ... in accept order
  std::map<BusinessId, BusinessRow> businesses;
  std::map<BusinessId, std::uint64_t> used;
  ClaimToken last_token = 0;
  std::vector<std::pair<MessageId, ClaimToken>> claims;  // every claim handed out, in order

  std::optional<MessageId> find(BusinessId b, const std::string& type, const std::string& id) const {
    for (const auto& [mid, r] : rows) {
      if (r.business == b && r.type == type && r.id == id) return mid;
    }
    return std::nullopt;
  }
  std::optional<MessageId> due_now() const {
    std::optional<MessageId> best;
    for (const auto& [id, r] : rows) {
      if (is_final(r.status) || r.due > now) continue;
      if (!best || r.due < rows.at(*best).due) best = id;
    }
    return best;
  }
  std::optional<Time> next_due() const {
    std::optional<Time> t;
    for (const auto& [id, r] : rows) {
      if (!is_final(r.status) && (!t || r.due < *t)) t = r.due;
    }
    return t;
  }
  std::uint64_t charged() const {
    std::uint64_t n = 0;
    for (const auto& [b, u] : used) n += u;
    return n;
  }
};

struct Stores {
  MemoryStore memory;
  SqliteStore sqlite{":memory:", Durability::off};
  std::array<Store*, 2> all{&memory, &sqlite};
};

void run_accept(const Op& op, Model& m, Stores& s) {
  std::vector<NewMessage> ms;
  for (const auto& [type, id] : op.keys) {
    NewMessage n;
    n.biz_type = type;
    n.biz_id = id;
    n.recipient = 100 + op.content;
    n.content = op.content;
    n.kind = op.keys.size() > 1 ? Kind::bulk : Kind::single;
    n.send_at = m.now + op.send_in;
    ms.push_back(n);
  }
  const BusinessRow& biz = m.businesses.at(op.business);
  AcceptRequest req;
  req.business = op.business;
  req.epoch = op.stale_epoch ? biz.epoch + 1 : biz.epoch;
  req.now = m.now;
  req.messages = ms;
  req.claim_for = op.pod;
  req.lease = kLease;

  // What the model says.
  AcceptOutcome want = AcceptOutcome::accepted;
  std::optional<MessageId> first_existing;
  std::size_t existing = 0;
  bool same = true;
  for (const auto& [type, id] : op.keys) {
    if (const auto f = m.find(op.business, type, id)) {
      ++existing;
      same = same && m.rows.at(*f).content == op.content;
      if (!first_existing) first_existing = f;
    }
  }
  bool twice = false;
  for (std::size_t i = 0; i < op.keys.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) twice = twice || op.keys[i] == op.keys[j];
  }
  const std::uint64_t used = m.used[op.business];
  if (biz.state != GrantState::approved || req.epoch != biz.epoch) {
    want = AcceptOutcome::revoked;
  } else if (existing > 0) {
    want = existing == op.keys.size() && same ? AcceptOutcome::duplicate : AcceptOutcome::conflict;
  } else if (twice) {
    want = AcceptOutcome::conflict;
  } else if (used + op.keys.size() > biz.quota) {
    want = AcceptOutcome::quota_exhausted;
  }

  const AcceptResult got = s.memory.accept(req);
  const AcceptResult other = s.sqlite.accept(req);
  RC_ASSERT(got.outcome == want);
  RC_ASSERT(other.outcome == want);
  RC_ASSERT(got.first == other.first);
  RC_ASSERT(got.first_token == other.first_token);
  RC_ASSERT(got.quota_left == other.quota_left);
  if (want == AcceptOutcome::duplicate || (want == AcceptOutcome::conflict && existing > 0)) {
    RC_ASSERT(got.first == *first_existing);
    RC_ASSERT(got.status == m.rows.at(*first_existing).status);
    RC_ASSERT(got.status == other.status);
  }
  if (want != AcceptOutcome::accepted) return;
  RC_ASSERT(got.first == m.rows.size() + 1);
  ClaimToken next_token = got.first_token;
  for (const auto& [type, id] : op.keys) {
    ModelRow r;
    r.business = op.business;
    r.type = type;
    r.id = id;
    r.content = op.content;
    const MessageId mid = m.rows.size() + 1;
    if (op.pod != 0 && op.send_in == Duration::zero()) {
      r.status = Status::in_flight;
      r.due = m.now + kLease;
      r.token = next_token++;  // the claimed messages' tokens count up from first_token
      RC_ASSERT(r.token > m.last_token);
      m.last_token = r.token;
      m.claims.emplace_back(mid, r.token);
    } else {
      r.due = m.now + op.send_in;
    }
    m.rows[mid] = r;
  }
  m.used[op.business] += op.keys.size();
  RC_ASSERT(got.quota_left == biz.quota - m.used[op.business]);
}

void run_claim(const Op& op, Model& m, Stores& s) {
  const std::optional<MessageId> want = m.due_now();
  MessageRow a, b;
  const std::optional<Status> got = s.memory.claim_due(m.now, op.pod, kLease, a);
  const std::optional<Status> other = s.sqlite.claim_due(m.now, op.pod, kLease, b);
  RC_ASSERT(got.has_value() == want.has_value());
  RC_ASSERT(other == got);
  if (!want) return;
  RC_ASSERT(a == b);
  ModelRow& r = m.rows.at(*want);
  RC_ASSERT(a.id == *want);
  RC_ASSERT(*got == r.status);
  RC_ASSERT(a.claim_token > m.last_token);
  m.last_token = a.claim_token;
  r.status = Status::in_flight;
  r.due = m.now + kLease;
  r.token = a.claim_token;
  m.claims.emplace_back(*want, a.claim_token);
}

void run_complete(const Op& op, Model& m, Stores& s) {
  if (m.claims.empty()) return;
  // Mostly the newest claim (the claimant that still holds it), sometimes any (a stale token).
  const auto [id, token] = op.pick < 30 ? m.claims.back() : m.claims[op.pick % m.claims.size()];
  Completion c;
  c.status = op.status;
  c.reason = is_final(op.status) ? Reason::exhausted : Reason::none;
  c.at = m.now;
  c.due_at = m.now + op.send_in;
  c.provider = 1;
  c.pod = 1;
  c.attempts = op.attempted ? 1 : 0;
  c.accepted = op.accepted;
  ModelRow& r = m.rows.at(id);
  const bool want = r.status == Status::in_flight && r.token == token;
  RC_ASSERT(s.memory.complete(id, token, c) == want);
  RC_ASSERT(s.sqlite.complete(id, token, c) == want);
  if (!want) return;
  r.status = op.status;
  r.due = c.due_at;
  r.attempts += op.attempted ? 1 : 0;
  r.accepted = r.accepted || op.accepted;
  if (op.status == Status::failed && r.charged && !r.accepted) {  // the refund rule, restated
    r.charged = false;
    --m.used[r.business];
  }
}

void run_receipt(const Op& op, Model& m, Stores& s) {
  const MessageId id = op.pick % (m.rows.size() + 2);
  ReceiptOutcome want = ReceiptOutcome::not_found;
  if (m.rows.count(id) != 0) {
    ModelRow& r = m.rows.at(id);
    want = is_final(r.status) ? ReceiptOutcome::already_final : ReceiptOutcome::applied;
    if (want == ReceiptOutcome::applied) {
      r.status = op.delivered ? Status::delivered : Status::undelivered;
      r.accepted = true;
    }
  }
  RC_ASSERT(s.memory.receipt(id, op.delivered, m.now) == want);
  RC_ASSERT(s.sqlite.receipt(id, op.delivered, m.now) == want);
}

void compare(const Model& m, Stores& s) {
  const StoreCounts counts = s.memory.counts();
  RC_ASSERT(counts == s.sqlite.counts());
  RC_ASSERT(counts.charged == m.charged());
  RC_ASSERT(s.memory.next_due() == m.next_due());
  RC_ASSERT(s.sqlite.next_due() == m.next_due());
  for (const auto& [b, used] : m.used) {
    RC_ASSERT(s.memory.quota_used(b, 0) == used);
    RC_ASSERT(s.sqlite.quota_used(b, 0) == used);
    RC_ASSERT(used <= m.businesses.at(b).quota);
  }
  for (const auto& [id, r] : m.rows) {
    const std::optional<MessageRow> a = s.memory.get(id);
    const std::optional<MessageRow> b = s.sqlite.get(id);
    RC_ASSERT(a.has_value());
    RC_ASSERT(a == b);
    RC_ASSERT(a->status == r.status);
    RC_ASSERT(a->charged == r.charged);
    RC_ASSERT(a->accepted == r.accepted);
    RC_ASSERT(a->attempts == r.attempts);
    RC_ASSERT(s.memory.history(id) == s.sqlite.history(id));
  }
}

}  // namespace

void stores_match_the_model() {
  const std::vector<Op> ops = *rc::gen::container<std::vector<Op>>(gen_op());
  Model m;
  Stores s;
  for (BusinessId b = 1; b <= 3; ++b) {
    const BusinessRow row{b, "b" + std::to_string(b), GrantState::approved, kQuota, 1, {}, {}};
    m.businesses[b] = row;
    for (Store* store : s.all) store->put_business(row);
  }
  for (const Op& op : ops) {
    RC_LOG() << op << "\n";
    switch (op.kind) {
      case OpKind::accept: run_accept(op, m, s); break;
      case OpKind::claim: run_claim(op, m, s); break;
      case OpKind::complete: run_complete(op, m, s); break;
      case OpKind::receipt: run_receipt(op, m, s); break;
      case OpKind::advance: m.now += op.by; break;
      case OpKind::revoke:
      case OpKind::approve: {
        BusinessRow& row = m.businesses.at(op.business);
        row.state = op.kind == OpKind::revoke ? GrantState::revoked : GrantState::approved;
        if (op.kind == OpKind::revoke) ++row.epoch;
        for (Store* store : s.all) store->put_business(row);
        break;
      }
    }
    compare(m, s);
  }
}

}  // namespace relaysim::sms_store_props
