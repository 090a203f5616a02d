#include "sim/sms/message_checker.h"

#include <algorithm>
#include <bit>

#include "model/core/assert.h"
#include "model/resilience/backoff.h"
#include "sim/report/text.h"

namespace relaysim::sim::sms {

using namespace relaysim::sms;

namespace {

std::uint64_t ledger_key(std::uint32_t business, std::uint32_t period) {
  return static_cast<std::uint64_t>(business) << 32 | period;
}

void key_text(std::string& out, BusinessId b, std::string_view type, std::string_view id) {
  out.assign(std::to_string(b));
  out += '/';
  out += type;
  out += '/';
  out += id;
}

}  // namespace

MessageChecker::MessageChecker(const SmsSpec& spec, std::uint64_t seed, Ledger& ledger, Judged judged)
    : spec_(spec), judged_(judged), violate_(ledger), marketing_(spec, seed, violate_) {}

MessageId MessageChecker::find_key(std::string_view key) const {
  return keys_.find(hash_bytes(key), [&](std::uint64_t id) {
    RELAYSIM_ASSERT(id >= 1 && id <= key_at_.size() && key_at_[id - 1] != kNoKey, "a key's message has its place in the arena");
    const std::uint64_t at = key_at_[id - 1];
    return std::string_view(key_arena_).substr(at >> 24, at & 0xffffff) == key;
  });
}

MessageChecker::Message* MessageChecker::find(MessageId id) {
  return id >= 1 && id <= messages_.size() && messages_[id - 1].known ? &messages_[id - 1] : nullptr;
}

const BusinessSpec* MessageChecker::business(BusinessId id) const {
  return id >= 1 && id <= spec_.businesses.size() ? &spec_.businesses[id - 1] : nullptr;
}

void MessageChecker::on(const Accepted& e) {
  const AcceptResult& r = e.result;
  if (r.outcome == AcceptOutcome::duplicate) {
    check_repeat(e.request, r);
    return;
  }
  if (r.outcome == AcceptOutcome::quota_exhausted) check_quota_refusal(e.request);
  if (r.outcome == AcceptOutcome::accepted) record_accepted(e.request, r);
}

// S-dedup: a repeated request is answered with the first one's message and its outcome so far.
void MessageChecker::check_repeat(const AcceptRequest& req, const AcceptResult& r) {
  RELAYSIM_ASSERT(!req.messages.empty(), "a request carries a message");
  const NewMessage& m = req.messages[0];
  key_text(scratch_, req.business, m.biz_type, m.biz_id);
  const MessageId known = find_key(scratch_);
  if (known == 0) {
    violate_(Invariant::dedup, req.now, r.first, "a request was answered as a repeat of a key never accepted");
  } else if (known != r.first) {
    violate_(Invariant::dedup, req.now, r.first,
             "a repeated request was answered with message " + std::to_string(r.first) + ", not the first one (" +
                 std::to_string(known) + ")");
  } else if (const Message* first = find(r.first); first != nullptr) {
    // Its outcome so far: the final state the oracle saw, or none yet.
    const bool ended = first->final_status != kOpen;
    if (ended != is_final(r.status) || (ended && static_cast<Status>(first->final_status) != r.status)) {
      violate_(Invariant::dedup, req.now, r.first,
               "a repeated request was told its message is " + std::string(to_string(r.status)) + ", but it is " +
                   (ended ? std::string(to_string(static_cast<Status>(first->final_status))) : std::string("not final")));
    }
  }
}

// S-quota, the other side: a refusal is true only when the request did not fit in what its
// business had left, as the oracle counts it (charges less refunds, checked against the store's
// count at every back-office query and at the end).
void MessageChecker::check_quota_refusal(const AcceptRequest& req) {
  const BusinessSpec* b = business(req.business);
  const auto it = charged_.find(ledger_key(req.business, req.period));
  const std::uint64_t held = it == charged_.end() ? 0 : it->second;
  if (b != nullptr && held + req.messages.size() <= b->quota) {
    violate_(Invariant::quota, req.now, 0,
             "a request of " + std::to_string(req.messages.size()) + " message(s) was refused for quota, but business '" +
                 b->name + "' held " + std::to_string(held) + " of its " + std::to_string(b->quota) + " units");
  }
}

// An accepted request's messages: S-scope (no revoked grant), S-dedup (no key twice) and S-quota
// (never over), and the messages kept for what follows.
void MessageChecker::record_accepted(const AcceptRequest& req, const AcceptResult& r) {
  if (req.business >= 1 && req.business <= revoked_epochs_.size()) {
    const std::vector<std::uint64_t>& revoked = revoked_epochs_[req.business - 1];
    if (std::find(revoked.begin(), revoked.end(), req.epoch) != revoked.end()) {
      violate_(Invariant::scope, req.now, r.first,
               "accepted with a token of grant epoch " + std::to_string(req.epoch) + ", which was revoked");
    }
  }
  for (std::size_t i = 0; i < req.messages.size(); ++i) {
    const NewMessage& m = req.messages[i];
    const MessageId id = r.first + i;
    // Ids come in order in a simulation; a live run's processes may tell of them out of order (a
    // process logs its accept after its commit), so a gap waits for the message that fills it.
    if (id > messages_.size()) {
      messages_.resize(id);
      key_at_.resize(id, kNoKey);
    }
    RELAYSIM_ASSERT(!messages_[id - 1].known, "each message is accepted once");
    messages_[id - 1] = Message{req.business, req.period, m.send_at};
    messages_[id - 1].known = true;
    ++accepted_;
    key_text(scratch_, req.business, m.biz_type, m.biz_id);
    if (const MessageId first = find_key(scratch_); first != 0) {
      violate_(Invariant::dedup, req.now, id,
               "accepted key " + scratch_ + " a second time (first as message " + std::to_string(first) + ")");
    } else {
      RELAYSIM_ASSERT(scratch_.size() < (1U << 24), "a key shorter than 16 MiB");
      key_at_[id - 1] = key_arena_.size() << 24 | scratch_.size();
      key_arena_ += scratch_;
      keys_.insert(hash_bytes(scratch_), id);
    }
  }
  std::uint64_t& used = charged_[ledger_key(req.business, req.period)];
  RELAYSIM_ASSERT(key_at_.size() == messages_.size(), "a key's place for every message");
  used += req.messages.size();
  const BusinessSpec* b = business(req.business);
  if (b != nullptr && used > b->quota) {
    violate_(Invariant::quota, req.now, r.first,
             "business '" + b->name + "' holds " + std::to_string(used) + " quota units, over its quota of " +
                 std::to_string(b->quota));
  }
}

void MessageChecker::on(const Claimed& e) {
  Message* m = find(e.row.id);
  if (m == nullptr) return;
  m->claim_pinned = kNoProvider;
  m->rescued = e.prior == Status::in_flight;
  m->claim = e.row.claim_token;
  m->claim_pod = e.pod;
  m->accept_seen = m->accepted;
  m->claim_submits = 0;
  // A claim of a message whose last outcome was ambiguous stays with that provider
  // (model/sms/node.h); any other claim tries the providers afresh.
  m->round_claim = e.row.claim_token;
  m->round_tried = 0;
  m->round_pinned = (e.prior == Status::unknown || e.prior == Status::in_flight) &&
                    e.row.provider != kNoProvider && !e.row.accepted;
  // A claim that took over an expired lease forgets the plan its predecessor could not record.
  if (m->rescued) m->retry_due = Time{};
  if (e.prior != m->status) {
    violate_(Invariant::lifecycle, e.at, e.row.id,
             "claimed as " + std::string(to_string(e.prior)) + ", but its events had left it " + std::string(to_string(m->status)));
  }
  move(*m, e.row.id, e.prior, Status::in_flight, e.at);
}

void MessageChecker::check_ending(const Message& m, MessageId id, const MessageRow& row, const Completion& c) {
  if (c.status == Status::failed && c.reason == Reason::expired && c.at <= m.send_at + spec_.platform.validity) {
    violate_(Invariant::schedule, c.at, id,
             "ended as expired at " + format_time(c.at) + ", though its validity lasts until " +
                 format_time(m.send_at + spec_.platform.validity));
  }
  if (c.status == Status::suppressed) marketing_.check_suppression(id, m.send_at, row, c);
}

void MessageChecker::on(const CapTaken& e) {
  if (find(e.message) != nullptr) marketing_.check_cap(e);
}

// A claim that waited (for a shared limit, or an in-memory retry) reads its message again before
// it submits, so an accept recorded before then (a receipt of an earlier submit) is one it sees.
// In a simulation the read and the submit come at one instant: any accept recorded before the
// submit was seen. Live, another pod may commit a receipt between the read and the submit, and
// no line tells of the read; a limit's line is written just before it, so an accept recorded
// before the claim or before its limit's last line is one the claim saw.
void MessageChecker::on(const LimitDecided& e) {
  if (judged_ == Judged::simulation) return;  // judged on the submit alone: no work per decision
  Message* m = find(e.message);
  if (m != nullptr && m->claim != 0 && e.pod == m->claim_pod && m->accepted) m->accept_seen = true;
}

void MessageChecker::on(const SubmitStarted& e) {
  Message* m = find(e.row.id);
  if (m == nullptr) return;
  if (e.row.kind == Kind::marketing) marketing_.check_submit(e);
  m->submitted = true;
  if (m->submits < UINT16_MAX) ++m->submits;
  m->last_attempt = std::max(m->last_attempt, e.attempt);
  // A submit of a claim that has ended (another claim took the message over) can record nothing.
  if (e.row.claim_token == m->claim && m->claim_submits < UINT16_MAX) {
    ++m->claim_submits;
    const BusinessSpec* b = business(m->business);
    const unsigned count = unsigned{m->counted} + m->claim_submits;
    if (b != nullptr && count > b->policy.retry.max_attempts) {
      violate_(Invariant::retry, e.at, e.row.id,
               "submit " + std::to_string(count) + " started, but its business allows " +
                   std::to_string(b->policy.retry.max_attempts));
    }
  }
  if (e.at < m->retry_due) {
    violate_(Invariant::retry, e.at, e.row.id,
             "submitted at " + format_time(e.at) + ", before its retry was due at " + format_time(m->retry_due));
  }
  if (e.at < m->send_at) {
    violate_(Invariant::schedule, e.at, e.row.id,
             "submitted at " + format_time(e.at) + ", before its send_at " + format_time(m->send_at));
  }
  const bool seen = judged_ == Judged::simulation ? m->accepted : m->accept_seen && e.row.claim_token == m->claim;
  if (seen) {
    violate_(Invariant::failover, e.at, e.row.id, "submitted after a provider's certain accept was recorded, which its claim could see");
  }
  // A sync send's claim is its acceptance: its first submit begins the round. A submit of an older
  // claim than the round's (one whose lease ran out) is not judged here.
  if (e.row.claim_token > m->round_claim) {
    m->round_claim = e.row.claim_token;
    m->round_tried = 0;
    m->round_pinned = false;
  }
  if (e.row.claim_token == m->round_claim && !m->round_pinned && e.provider < kMaxProviders) {
    const ProviderMask bit = ProviderMask{1} << e.provider;
    if ((m->round_tried & bit) != 0 && std::popcount(m->round_tried) < static_cast<int>(spec_.providers.size())) {
      violate_(Invariant::failover, e.at, e.row.id,
               "submitted to provider " + std::to_string(e.provider) + " a second time while " +
                   std::to_string(spec_.providers.size() - static_cast<std::size_t>(std::popcount(m->round_tried))) +
                   " providers were still untried");
    }
    m->round_tried |= bit;
  }
  const ProviderId pinned = m->claim_pinned != kNoProvider ? m->claim_pinned : m->pinned;
  if (pinned != kNoProvider && e.provider != pinned) {
    violate_(Invariant::failover, e.at, e.row.id,
             "submitted to provider " + std::to_string(e.provider) + " after an ambiguous outcome at provider " +
                 std::to_string(pinned) + ", which may have sent it");
  }
}

void MessageChecker::on(const SubmitFinished& e) {
  Message* m = find(e.message);
  if (m == nullptr) return;
  if (e.claim == m->claim && (e.decision.step == Step::retry || e.decision.step == Step::unknown)) {
    check_backoff(*m, e);
  }
  if (e.claim == m->round_claim) check_failover(*m, e);
  if (is_ambiguous(e.outcome)) m->claim_pinned = e.provider;
  if (e.outcome == SubmitClass::accepted && m->seen_accepts < 0xff) ++m->seen_accepts;
}

// S-retry, both sides of the backoff: the wait the gateway planned is what its business's
// policy draws for the attempt it counts, no less and no more. (It keeps no record of its
// draws, so decorrelated jitter grows from the first delay.)
void MessageChecker::check_backoff(Message& m, const SubmitFinished& e) {
  const BusinessSpec* b = business(m.business);
  const unsigned n = unsigned{m.counted} + m.claim_submits;
  if (b != nullptr && n >= 1) {
    const BackoffPolicy& backoff = b->policy.retry.backoff;
    const Duration wait = e.decision.due - e.at;
    const Duration least = min_delay(backoff, n);
    const Duration most = max_delay(backoff, n, Duration::zero());
    if (wait < least || wait > most) {
      violate_(Invariant::retry, e.at, e.message,
               "retry after submit " + std::to_string(n) + " planned " + format_duration(wait) + " later, outside the backoff's " +
                   format_duration(least) + " to " + format_duration(most));
    }
  }
  m.retry_due = std::max(m.retry_due, e.decision.due);
}

// S-failover, the other side of failing over: a provider that certainly did not take the message
// (throttled, unavailable) is followed at once by an untried one while any is left; a wait for a
// retry comes only when every provider of the round was tried.
void MessageChecker::check_failover(Message& m, const SubmitFinished& e) {
  const bool certain_no = e.outcome == SubmitClass::throttled || e.outcome == SubmitClass::unavailable;
  const int tried = std::popcount(m.round_tried);
  if (certain_no && e.decision.step == Step::retry && !m.round_pinned &&
      tried < static_cast<int>(spec_.providers.size())) {
    violate_(Invariant::failover, e.at, e.message,
             "provider " + std::to_string(e.provider) + " answered " + std::string(to_string(e.outcome)) +
                 " and a retry was planned, though " +
                 std::to_string(spec_.providers.size() - static_cast<std::size_t>(tried)) +
                 " providers were untried");
  }
  if (e.decision.step == Step::retry || e.decision.step == Step::unknown) m.round_tried = 0;
}

void MessageChecker::finalise(Message& m, MessageId id, Status s, Time at) {
  RELAYSIM_ASSERT(is_final(s), "only a final status ends a message");
  if (m.final_status != kOpen) {
    violate_(Invariant::final, at, id,
             "became " + std::string(to_string(s)) + " after it had ended " +
                 std::string(to_string(static_cast<Status>(m.final_status))));
    return;
  }
  m.final_status = static_cast<std::uint8_t>(s);
}

void MessageChecker::on(const Completed& e) {
  Message* m = find(e.row.id);
  if (m == nullptr) return;
  if (!e.applied) {
    if (e.failed) m->store_failed = true;
    return;
  }
  const Completion& c = e.completion;
  check_ending(*m, e.row.id, e.row, c);
  m->counted = static_cast<std::uint16_t>(std::min<unsigned>(UINT16_MAX, unsigned{m->counted} + c.attempts));
  if (e.row.claim_token == m->claim) {
    m->claim_submits = 0;
    m->claim = 0;
  }
  move(*m, e.row.id, m->status, c.status, c.at);
  m->accepted = m->accepted || c.accepted;
  if (c.status == Status::unknown) m->pinned = c.provider != kNoProvider ? c.provider : m->pinned;
  if (!is_final(c.status)) return;
  finalise(*m, e.row.id, c.status, c.at);
  // A crash or a store failure may hide a submit from the count the gateway keeps (so it may
  // give up after more), never add one.
  if (c.status == Status::failed && c.reason == Reason::exhausted && m->business >= 1 &&
      m->business <= spec_.businesses.size()) {
    const std::uint16_t allowed = spec_.businesses[m->business - 1].policy.retry.max_attempts;
    const std::uint16_t submits = std::max({m->submits, m->reached, m->last_attempt});
    if (submits < allowed) {
      violate_(Invariant::retry, c.at, e.row.id,
               "gave up as exhausted after " + std::to_string(submits) + " submits, of " + std::to_string(allowed) +
                   " its business allows");
    }
  }
  if (m->charged && relaysim::sms::refunds(c.status, m->accepted)) {
    m->charged = false;
    ++refunds_;
    std::uint64_t& used = charged_[ledger_key(m->business, m->period)];
    RELAYSIM_ASSERT(used > 0, "a refund follows a charge");
    --used;
  }
}

void MessageChecker::on(const ReceiptReceived& e) {
  Message* m = find(e.message);
  if (m == nullptr || e.outcome != ReceiptOutcome::applied) return;
  m->accepted = true;
  move(*m, e.message, m->status, e.delivered ? Status::delivered : Status::undelivered, e.at);
  finalise(*m, e.message, e.delivered ? Status::delivered : Status::undelivered, e.at);
}

void MessageChecker::move(Message& m, MessageId id, Status from, Status to, Time at) {
  if (!allows(kMessageLifecycle, from, to)) {
    violate_(Invariant::lifecycle, at, id,
             "moved " + std::string(to_string(from)) + " -> " + std::string(to_string(to)) + ", which its lifecycle has no move for");
  }
  m.status = to;
}

void MessageChecker::on(const ClientAnswered& e) {
  const AcceptOutcome o = e.answer.outcome;
  // Named only for a report: a string per answer would cost every simulated run.
  const auto request = [&e] { return e.label.empty() ? key_text(e.key) : std::string(e.label); };
  if (!e.repeat && e.answer.fault == AuthFault::none && !e.answer.unavailable &&
      (o == AcceptOutcome::duplicate || o == AcceptOutcome::conflict)) {
    violate_(Invariant::dedup, e.at, e.answer.first,
             "new request " + request() + " was answered as a " + std::string(to_string(o)) + " of message " +
                 std::to_string(e.answer.first));
  }
  const bool refused = e.answer.fault != AuthFault::none;
  // An unavailable answer says nothing of the token: a live gateway that is draining answers so
  // before it reads one.
  if (e.token == TokenKind::good && refused) {
    violate_(Invariant::scope, e.at, 0,
             "a good token of request " + request() + " was refused as " +
                 std::string(to_string(e.answer.fault)));
  } else if (e.token != TokenKind::good && !refused && !e.answer.unavailable) {
    violate_(Invariant::scope, e.at, e.answer.first,
             "a " + std::string(to_string(e.token)) + " token of request " + request() +
                 " was let through");
  }
}

void MessageChecker::on(const AdminActed& e) {
  if (e.action != static_cast<std::uint8_t>(AdminAction::revoke) || e.outcome != AdminOutcome::done) return;
  if (revoked_epochs_.size() <= e.business) revoked_epochs_.resize(e.business + 1);
  RELAYSIM_ASSERT(e.business < revoked_epochs_.size(), "a revoked grant's business has a list of epochs");
  revoked_epochs_[e.business].push_back(e.epoch);
}

void MessageChecker::on(const AdminQueried& e) {
  // The back office's answers, against what the oracle saw happen.
  const BusinessId id = e.business + 1;
  if (e.quota) {
    const auto it = charged_.find(ledger_key(id, e.quota->period));
    const std::uint64_t held = it == charged_.end() ? 0 : it->second;
    if (e.quota->used != held) {
      violate_(Invariant::quota, e.at, 0,
               "the back office said business " + std::to_string(id) + " used " + std::to_string(e.quota->used) +
                   " of its quota; the oracle counts " + std::to_string(held));
    }
  }
  if (e.latest) {
    const Message* m = find(e.latest->message.id);
    const Status said = e.latest->message.status;
    if (m != nullptr && m->final_status != kOpen && static_cast<Status>(m->final_status) != said) {
      violate_(Invariant::final, e.at, e.latest->message.id,
               "the back office said it is " + std::string(to_string(said)) + ", but it ended " +
                   std::string(to_string(static_cast<Status>(m->final_status))));
    }
    if (e.latest->history.empty() || e.latest->history.back().status != said) {
      violate_(Invariant::final, e.at, e.latest->message.id, "its status history does not end in its status");
    }
  }
}

void MessageChecker::on(const ProviderSubmitted& e) {
  Message* m = find(e.message);
  if (m != nullptr) {
    if (m->reached < UINT16_MAX) ++m->reached;
    m->last_attempt = std::max(m->last_attempt, e.attempt);
  }
  if (!sms::sent(e.fate)) return;
  ++sent_;
  if (m == nullptr) return;
  if (++m->sends > 1) {
    DuplicateCause cause = DuplicateCause::unexplained;
    // An earlier send whose accept the gateway never heard of: its answer was lost or late, or
    // its pod crashed before the answer came.
    if (m->seen_accepts < m->sends - 1) {
      cause = DuplicateCause::answer_lost;
    } else if (m->rescued) {
      cause = DuplicateCause::rescued;
    } else if (m->store_failed) {
      cause = DuplicateCause::store_failure;
    }
    RELAYSIM_ASSERT(static_cast<std::size_t>(cause) < duplicates_.size(), "a duplicate's cause the table counts");
    ++duplicates_[static_cast<std::size_t>(cause)];
    if (cause == DuplicateCause::unexplained) {
      violate_(Invariant::dup, e.at, e.message,
               "provider " + std::to_string(e.provider) + " sent it again (" + std::to_string(m->sends) +
                   " times) with no ambiguous outcome to explain it");
    }
  }
}

void MessageChecker::finish(Time end, Store& store) {
  // Every accepted message is still in the store (ids are never reused, nothing is deleted).
  std::uint64_t stored = 0;
  for (const std::uint64_t n : store.counts().by_status) stored += n;
  if (stored < accepted_) {
    lost_ = accepted_ - stored;
    violate_(Invariant::final, end, 0,
             std::to_string(lost_) + " accepted messages are missing from the store (" + std::to_string(stored) +
                 " of " + std::to_string(accepted_) + " kept)");
  }
  // The store holds exactly the quota one charge per message, less refunds, comes to.
  for (const auto& [key, used] : charged_) {
    const auto business = static_cast<BusinessId>(key >> 32);
    const auto period = static_cast<std::uint32_t>(key);
    const std::uint64_t held = store.quota_used(business, period);
    if (held != used) {
      violate_(Invariant::quota, end, 0,
               "business " + std::to_string(business) + " holds " + std::to_string(held) + " quota units in period " +
                   std::to_string(period) + ", but its messages account for " + std::to_string(used) +
                   " (one charge each, less refunds)");
    }
  }
}

}  // namespace relaysim::sim::sms
