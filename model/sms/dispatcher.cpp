#include "model/sms/dispatcher.h"

#include <algorithm>
#include <bit>
#include <string>

#include "model/core/assert.h"
#include "model/core/random.h"
#include "model/sms/marketing.h"
#include "model/sms/mutants.h"
#include "model/sms/submit.h"

namespace relaysim::sms {

Dispatcher::Dispatcher(Pod& pod, std::span<const BusinessPolicy> businesses, const BusinessPolicy& others,
                       ModeSwitch& mode, Campaigns& campaigns)
    : pod_(pod),
      businesses_(businesses),
      others_(others),
      mode_(mode),
      campaigns_(campaigns),
      router_(pod.config.routing, pod.providers.count()),
      workers_(pod.config.concurrency_per_pod),
      waker_(pod.timers, [this] { pump(); }) {
  if (pod.config.cluster_limit) {
    cluster_limit_ = std::make_unique<SharedLimiter>("sms:cluster", cluster_limit_config(pod.config), pod.kv, pod.clock);
  }
}

Dispatcher::~Dispatcher() {
  for (std::uint32_t i = 0; i < jobs_.size(); ++i) {
    if (jobs_[i].retry_timer) pod_.timers.cancel(jobs_[i].retry_timer);
  }
}

const BusinessPolicy& Dispatcher::policy(BusinessId business) const {
  return business >= 1 && business <= businesses_.size() ? businesses_[business - 1] : others_;
}

SharedLimiter* Dispatcher::business_limiter(BusinessId business) {
  const BusinessPolicy& p = policy(business);
  if (!p.limit || business < 1) return nullptr;
  if (business_limits_.size() < business) business_limits_.resize(business);
  std::unique_ptr<SharedLimiter>& l = business_limits_[business - 1];
  if (!l) {
    l = std::make_unique<SharedLimiter>("sms:business:" + std::to_string(business),
                                        business_limit_config(pod_.config, *p.limit), pod_.kv, pod_.clock);
  }
  return l.get();
}

// Sync: the message was accepted already claimed by this pod; it is sent in the client's request.
void Dispatcher::send_sync(const NewMessage& m, const AcceptRequest& accept, const AcceptResult& r, SendPath path,
                           const SendAnswer& a, AnswerCallback done) {
  RELAYSIM_ASSERT(path != SendPath::async, "a sync send is made in its client's request");
  RELAYSIM_ASSERT(r.first_token != 0, "a message accepted for this pod comes claimed by it");
  const Time now = accept.now;
  const std::uint32_t slot = new_job();
  Job& j = jobs_[slot];
  accepted_row(m, accept, r, j.row);
  j.prior = Status::pending;
  j.path = path;
  j.lease_ends = now + pod_.config.lease;
  j.answer = std::move(done);
  j.reply = a;
  j.answered = false;
  ++sync_busy_;
  pod_.events.emit(Claimed{pod_.id, j.row, j.prior, now});
  begin(slot);
}

// The row the store holds for `m`, accepted by `accept` already claimed by this pod.
void Dispatcher::accepted_row(const NewMessage& m, const AcceptRequest& accept, const AcceptResult& r,
                              MessageRow& row) const {
  const Time now = accept.now;
  row.id = r.first;
  row.business = accept.business;
  row.biz_type.assign(m.biz_type);
  row.biz_id.assign(m.biz_id);
  row.recipient = m.recipient;
  row.template_id = m.template_id;
  row.content = m.content;
  row.campaign = m.campaign;
  row.resend_of = m.resend_of;
  row.created_at = now;
  row.send_at = m.send_at;
  row.due_at = now + pod_.config.lease;
  row.updated_at = now;
  row.final_at = Time{};
  row.period = accept.period;
  row.claim_token = r.first_token;
  row.lease_owner = pod_.id;
  row.attempts = 0;
  row.segments = m.segments;
  row.provider = kNoProvider;
  row.kind = m.kind;
  row.status = Status::in_flight;
  row.reason = Reason::none;
  row.charged = true;
  row.accepted = false;
}

bool Dispatcher::marketing_allows(std::uint32_t slot, bool take_cap) {
  Job& j = jobs_[slot];
  if (j.row.kind != Kind::marketing) return true;
  const Time now = pod_.clock.now();
  const MarketingConfig& m = pod_.config.marketing;
  const Status waiting = j.pinned ? Status::unknown : Status::pending;
  if (pod_.directory.opted_out(j.row.recipient) && !planted(mutant::opt_out_ignored)) {
    finish(slot, completion(j, Status::suppressed, Reason::opted_out, {}));
    return false;
  }
  const std::int32_t offset = planted(mutant::quiet_hours_server_tz) ? 0 : pod_.directory.utc_offset(j.row.recipient);
  const Time until = quiet_until(now, offset, m.quiet_hours);
  if (until > now) {
    if (until > j.row.send_at + pod_.config.validity || planted(mutant::quiet_hours_suppress)) {
      finish(slot, completion(j, Status::suppressed, Reason::quiet_hours, {}));
      return false;
    }
    pod_.events.emit(MarketingDeferred{pod_.id, j.row.id, j.row.recipient, until, now});
    finish(slot, completion(j, waiting, Reason::none, until));
    return false;
  }
  if (!take_cap) return true;
  bool room = false;
  try {
    room = pod_.store.take_cap(j.row.recipient, j.row.id, now, m.cap);
  } catch (const StoreError& e) {
    pod_.store_failed(StoreOp::cap, e.failure());
    finish(slot, completion(j, waiting, Reason::none, now + pod_.config.store_retry));
    return false;
  }
  if (!room) {
    finish(slot, completion(j, Status::suppressed, Reason::frequency_cap, {}));
    return false;
  }
  if (m.cap.count != 0) pod_.events.emit(CapTaken{pod_.id, j.row.id, j.row.claim_token, j.row.recipient, now});
  return true;
}

void Dispatcher::receipt(MessageId id, ProviderId provider, bool delivered) {
  RELAYSIM_ASSERT(id != 0, "message ids count from 1");
  const Time now = pod_.clock.now();
  ReceiptOutcome outcome;
  try {
    outcome = pod_.store.receipt(id, delivered, now);
  } catch (const StoreError& e) {
    // The receipt is lost: the message ends unconfirmed when its receipt is overdue.
    pod_.store_failed(StoreOp::receipt, e.failure());
    return;
  }
  if (provider < router_.providers()) router_.observe_receipt(provider, now, delivered);
  pod_.events.emit(ReceiptReceived{pod_.id, id, provider, delivered, outcome, now});
}

std::uint32_t Dispatcher::new_job() {
  const std::uint32_t slot = jobs_.acquire();
  Job& j = jobs_[slot];
  j.tried = 0;
  j.provider = kNoProvider;
  j.submits = 0;
  j.pinned = false;
  j.accepted = false;
  j.answered = true;
  j.limit_stage = 0;
  j.waited = false;
  j.retry_timer = TimerId{};
  j.reply = SendAnswer{};
  return slot;
}

void Dispatcher::pump() {
  if (stopped_) return;
  // Completions that happen synchronously inside begin() call pump() again: folded into this loop.
  // A campaign's next chunk first (once, not in a call folded in): its messages are due at once.
  if (!loop_.running()) campaigns_.expand();
  const bool outermost = loop_.run([this] {
    // Each claim reads the clock afresh: on a live clock, time passes during a store call and a
    // completion inside begin(), and the workers' meter is never moved back.
    for (Time now = pod_.clock.now(); workers_.has_room() && now >= pod_.store_retry_at; now = pod_.clock.now()) {
      const std::uint32_t slot = new_job();
      Job& j = jobs_[slot];
      std::optional<Status> prior;
      try {
        prior = pod_.store.claim_due(now, pod_.id, pod_.config.lease, j.row);
      } catch (const StoreError& e) {
        jobs_.release(slot);
        pod_.store_failed(StoreOp::claim, e.failure());
        break;
      }
      if (!prior) {
        jobs_.release(slot);
        break;
      }
      workers_.take(now);
      j.prior = *prior;
      j.path = SendPath::async;
      j.lease_ends = now + pod_.config.lease;
      pod_.events.emit(Claimed{pod_.id, j.row, j.prior, now});
      begin(slot);
    }
  });
  if (outermost) arm_wake(pod_.clock.now());
}

void Dispatcher::arm_wake(Time now) {
  if (!workers_.has_room()) return;  // a completion will pump
  std::optional<Time> next;
  if (now >= pod_.store_retry_at) {
    try {
      next = pod_.store.next_due();
      if (const std::optional<Time> look = campaigns_.next_look(); look && (!next || *look < *next)) next = look;
    } catch (const StoreError& e) {
      pod_.store_failed(StoreOp::next_due, e.failure());
    }
  }
  waker_.arm(now, pod_.store_retry_at, next);
}

Completion Dispatcher::completion(const Job& j, Status status, Reason reason, Time due) const {
  Completion c;
  c.status = status;
  c.reason = reason;
  c.at = pod_.clock.now();
  c.due_at = due;
  // The provider stays on the row while it matters: the one that took the message (submitted
  // and after), or the one whose outcome is ambiguous (unknown) — which pins the message to it,
  // even through a claim that crashes. A message pending again was certainly not taken.
  c.provider = status == Status::pending ? kNoProvider : j.provider;
  c.pod = pod_.id;
  c.attempts = j.submits;
  c.accepted = j.accepted;
  return c;
}

void Dispatcher::begin(std::uint32_t slot) {
  Job& j = jobs_[slot];
  RELAYSIM_ASSERT(j.row.status == Status::in_flight && j.row.claim_token != 0, "a job begins on a message it claimed");
  const Time now = pod_.clock.now();
  // Pinned: its last outcome was ambiguous — stored as unknown, or left so by a claim that then
  // crashed (the row still names the provider, and no provider certainly took it).
  j.pinned = (j.prior == Status::unknown || j.prior == Status::in_flight) && j.row.provider != kNoProvider &&
             !j.row.accepted;
  if (j.prior == Status::submitted || j.row.accepted) {
    // A provider took the message: its receipt is overdue, or the claim that was ending it
    // crashed. It is never sent again; it ends unconfirmed.
    if (j.row.provider < router_.providers()) router_.observe_receipt(j.row.provider, now, false);
    finish(slot, completion(j, Status::unconfirmed, Reason::no_receipt, {}));
    return;
  }
  const Time valid_from = planted(mutant::validity_from_acceptance) ? j.row.created_at : j.row.send_at;
  if (now > valid_from + pod_.config.validity) {
    finish(slot, completion(j, Status::failed, Reason::expired, {}));
    return;
  }
  if (!marketing_allows(slot, false)) return;
  limit(slot);
}

namespace {
// The name a limit's log gives the next submit of a message: a retried take of the same submit
// is not counted twice.
std::uint64_t limit_member(MessageId id, std::uint32_t attempt) { return id << 16 | attempt; }
}  // namespace

void Dispatcher::limit(std::uint32_t slot) {
  Job& j = jobs_[slot];
  const std::uint64_t member = limit_member(j.row.id, j.row.attempts + j.submits + 1U);
  while (j.limit_stage < 2) {
    const bool business = j.limit_stage == 0;
    ++j.limit_stage;
    SharedLimiter* l = business ? business_limiter(j.row.business) : cluster_limit_.get();
    if (l == nullptr) continue;
    const BusinessId who = business ? j.row.business : 0;
    j.waited = true;
    l->take(1, member, [this, slot, who, l](const SharedDecision& d) { limited(slot, who, *l, d); });
    return;
  }
  if (j.waited && j.path == SendPath::async && !still_claimed(slot)) return;
  if (!marketing_allows(slot, true)) return;
  submit(slot);
}

bool Dispatcher::still_claimed(std::uint32_t slot) {
  // While a limit was asked (a store call away), the claim may have ended: a receipt of an
  // earlier submit made the message final, or the lease ran out and another pod took it over.
  // Submitting then would send a message a provider has certainly taken, or send it twice.
  Job& j = jobs_[slot];
  std::optional<MessageRow> now;
  try {
    now = pod_.store.get(j.row.id);
  } catch (const StoreError& e) {
    pod_.store_failed(StoreOp::claim, e.failure());
    now.reset();
  }
  if (now && now->status == Status::in_flight && now->claim_token == j.row.claim_token) return true;
  // Let the claim go: its completion is fenced out (another claim, or a final status, holds the
  // row), and the message is where the store says.
  finish(slot, completion(j, Status::pending, Reason::none, pod_.clock.now()));
  return false;
}

void Dispatcher::limited(std::uint32_t slot, BusinessId business, const SharedLimiter& limiter, const SharedDecision& d) {
  Job& j = jobs_[slot];
  // A local decision is told at the moment it was taken (the oracle replays it there); a live
  // clock has moved on a little since.
  const Time now = d.via == LimitVia::local ? d.at : pod_.clock.now();
  pod_.events.emit(LimitDecided{pod_.id, j.row.id, business, limiter.config(),
                            limit_member(j.row.id, j.row.attempts + j.submits + 1U), d, now});
  if (d.admitted) {
    limit(slot);
    return;
  }
  // Held back: stored for later and sent by the workers when the limit allows — never dropped.
  const Duration wait = d.retry_after == Duration::max() ? pod_.config.store_retry
                                                         : std::max<Duration>(d.retry_after, std::chrono::milliseconds(1));
  finish(slot, completion(j, j.pinned ? Status::unknown : Status::pending, Reason::none, now + wait));
}

void Dispatcher::submit(std::uint32_t slot) {
  Job& j = jobs_[slot];
  const Time now = pod_.clock.now();
  const ProviderId p = j.pinned ? j.row.provider : router_.pick(now, j.tried);
  RELAYSIM_ASSERT(p != kNoProvider && p < pod_.providers.count(), "a provider to submit to");
  j.provider = p;
  j.tried |= ProviderMask{1} << p;
  ++j.submits;
  j.started = now;
  const auto attempt = static_cast<std::uint16_t>(j.row.attempts + j.submits);
  pod_.events.emit(SubmitStarted{pod_.id, j.row, p, attempt, j.path, now});
  pod_.providers.submit(p, Submit{j.row.id, j.row.recipient, j.row.template_id, j.row.content, j.row.segments, attempt},
                    pod_.config.send_timeout, [this, slot](SubmitClass c) { on_result(slot, c); });
}

void Dispatcher::on_result(std::uint32_t slot, SubmitClass outcome) {
  Job& j = jobs_[slot];
  const Time now = pod_.clock.now();
  const Duration latency = now - j.started;
  router_.observe(j.provider, now, outcome, latency);
  const BusinessPolicy& p = policy(j.row.business);
  const auto attempts = planted(mutant::retry_counter_shared) ? static_cast<std::uint16_t>(++shared_submits_)
                                                               : static_cast<std::uint16_t>(j.row.attempts + j.submits);
  const bool untried = !j.pinned && static_cast<std::size_t>(std::popcount(j.tried)) < pod_.providers.count();
  const Decision d = decide(SubmitContext{outcome, attempts, untried, now, pod_.config.receipt_timeout, Duration::zero()},
                            p.retry, pod_.config.on_unknown, pod_.rng);
  pod_.events.emit(SubmitFinished{pod_.id, j.row.id, j.provider, outcome, latency, j.path, d, now, j.row.claim_token});
  // The switch judges the submit after it is reported, so a change of mode it causes follows
  // the evidence it rests on.
  if (j.path != SendPath::async) mode_.observe(now, latency, outcome != SubmitClass::accepted, j.path);
  if (p.retry.alert_after > 0 && attempts == p.retry.alert_after) pod_.events.emit(RetryAlert{pod_.id, j.row.id, attempts, now});
  switch (d.step) {
    case Step::submitted:
      j.accepted = true;
      finish(slot, completion(j, Status::submitted, Reason::none, d.due));
      return;
    case Step::fail_over:
      // Later than the rules were judged: an opt-out or a quiet hour may have begun since.
      if (!marketing_allows(slot, true)) return;
      submit(slot);
      return;
    case Step::fail:
      finish(slot, completion(j, Status::failed, d.reason, {}));
      return;
    case Step::unknown:
      finish(slot, completion(j, Status::unknown, Reason::none, d.due));
      return;
    case Step::retry:
      break;
  }
  if (j.pinned) {
    // Its earlier outcome is still unknown: it stays on its provider until that is certain.
    finish(slot, completion(j, Status::unknown, Reason::none, d.due));
    return;
  }
  const Duration claim_work = pod_.config.send_timeout * static_cast<std::int64_t>(pod_.providers.count());
  if (!p.retry.cross_process && d.due + claim_work < j.lease_ends) {
    // Retried in this pod's memory while the claim lasts; the client hears `pending` now.
    answer(slot, Answer::pending);
    j.tried = 0;
    j.limit_stage = 0;
    j.waited = true;  // a receipt of an earlier submit may end the claim while it waits
    j.retry_timer = pod_.timers.schedule_at(planted(mutant::in_memory_retry_early) ? now : d.due, [this, slot] {
      jobs_[slot].retry_timer = TimerId{};
      limit(slot);
    });
    return;
  }
  finish(slot, completion(j, Status::pending, Reason::none, d.due));
}

void Dispatcher::answer(std::uint32_t slot, Answer a) {
  Job& j = jobs_[slot];
  if (j.answered) return;
  j.answered = true;
  j.reply.answer = a;
  const Time now = pod_.clock.now();
  pod_.events.emit(Answered{pod_.id, j.reply, now});
  AnswerCallback done = std::move(j.answer);
  j.answer = {};
  done(j.reply);
}

void Dispatcher::finish(std::uint32_t slot, const Completion& c) {
  Job& j = jobs_[slot];
  RELAYSIM_ASSERT(c.status != Status::in_flight, "a completion leaves in_flight");
  RELAYSIM_ASSERT(j.path == SendPath::async ? workers_.busy() > 0 : sync_busy_ > 0, "a finished job was counted as busy");
  bool applied = false;
  bool failed = false;
  try {
    applied = pod_.store.complete(j.row.id, j.row.claim_token, c);
  } catch (const StoreError& e) {
    // Nothing was recorded: the message stays in flight under this claim until its lease
    // expires, and then another claim takes it over.
    failed = true;
    pod_.store_failed(StoreOp::complete, e.failure());
  }
  pod_.events.emit(Completed{pod_.id, j.row, c, applied, failed});
  answer(slot, answer_for(c.status));
  if (j.path == SendPath::async) {
    workers_.release(pod_.clock.now());
  } else {
    --sync_busy_;
  }
  jobs_.release(slot);
  pump();
}

}  // namespace relaysim::sms
