#include "model/webhook/dispatcher.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/webhook/mutants.h"
#include "model/webhook/retry.h"

namespace relaysim::webhook {

Dispatcher::Dispatcher(PodId pod, const PlatformConfig& config, Store& store, Clock& clock, Timers& timers,
                       Rng& rng, UrlResolver& resolver, HttpClient& http, Events& events, Noticed noticed)
    : pod_(pod), config_(config), store_(store), clock_(clock), rng_(rng),
      resolver_(resolver), http_(http), events_(events), noticed_(std::move(noticed)), jobs_(config.concurrency_per_pod), slots_(config.concurrency_per_pod),
      waker_(timers, [this] { pump(); }) {
  free_.reserve(jobs_.size());
  for (std::uint32_t i = static_cast<std::uint32_t>(jobs_.size()); i-- > 0;) free_.push_back(i);
}

void Dispatcher::pump() {
  // Completions that happen synchronously inside begin() call pump() again: folded into this loop.
  const bool outermost = loop_.run([this] {
    // The clock is read again for each claim: virtual time stands still while the model runs, but
    // a live clock moves on during a claim and its attempt's first steps, and a time read before
    // them would be older than what those steps recorded.
    Time now{};
    // After a failed store call, the store is left alone until store_retry has passed.
    while (!stopped_ && slots_.has_room() && (now = clock_.now()) >= store_retry_at_) {
      const std::uint32_t slot = free_.back();
      Job& job = jobs_[slot];
      bool claimed = false;
      try {
        // Expired work first: it is dead-lettered at once and must not wait behind due work.
        claimed = store_.claim_expired(now, pod_, lease(), job.row) ||
                  store_.claim_due(now, pod_, lease(), job.row, claimable(now));
      } catch (const StoreError& e) {
        store_failed(StoreOp::claim, e.failure());
        break;
      }
      if (!claimed) break;
      free_.pop_back();
      job.busy = true;
      slots_.take(now);
      begin(slot);
    }
  });
  if (outermost) arm_wake(clock_.now());
}

Claimable Dispatcher::claimable(Time now) const {
  // While the breaker refuses every lookup, claiming a blocked request would only defer it again
  // (a store write and a claim per request per backoff step, millions in a long outage). They
  // stay where they are until a probe may go out; the pod meanwhile takes the work it can move.
  if (resolver_.breaker().refuses(now) && !planted(mutant::blocked_claimed_while_refused)) return Claimable::unblocked;
  return Claimable::all;
}

Duration Dispatcher::lease() const {
  if (planted(mutant::lease_shorter_than_timeout)) return (config_.lookup_timeout + config_.http_timeout) / 2;
  return config_.lease;
}

void Dispatcher::store_failed(StoreOp op, StoreFailure failure) {
  const Time now = clock_.now();
  events_.emit(StoreFailed{pod_, op, failure, now});
  store_retry_at_ = now + config_.store_retry;
}

void Dispatcher::arm_wake(Time now) {
  if (free_.empty() || stopped_) return;  // a completion will pump
  std::optional<Time> next;
  if (now >= store_retry_at_) {
    try {
      const Claimable which = claimable(now);
      next = store_.next_due(which);
      left_blocked_ = which == Claimable::unblocked;
      if (left_blocked_) {
        // The blocked requests left out come due when the breaker lets a probe through, or just
        // after a deadline, to be dead-lettered (claim_expired takes what has passed it).
        const auto earliest = [&next](std::optional<Time> t) {
          if (t && (!next || *t < *next)) next = t;
        };
        earliest(resolver_.breaker().open_until());
        if (const std::optional<Time> expiry = store_.next_expiry()) earliest(*expiry + Duration{1});
      }
    } catch (const StoreError& e) {
      store_failed(StoreOp::next_due, e.failure());
    }
  }
  waker_.arm(now, store_retry_at_, next);
}

void Dispatcher::begin(std::uint32_t slot) {
  RELAYSIM_ASSERT(slot < jobs_.size() && jobs_[slot].busy, "a claim begins in a slot taken for it");
  Job& job = jobs_[slot];
  RELAYSIM_ASSERT(job.row.status == Status::in_flight, "a claimed request is in flight");
  const Time now = clock_.now();
  events_.emit(Claimed{pod_, job.row, now});
  if (must_dead_letter(now, job.row.deadline_at, job.row.not_before) && !planted(mutant::expired_backlog_attempted)) {
    finish(slot, Completion{nullptr, Status::dead_lettered, Reason::deadline, now, now, now, Duration::zero()});
    return;
  }
  resolver_.resolve(job.row.cxid, [this, slot](const Resolution& r) { on_resolved(slot, r); });
}

void Dispatcher::on_resolved(std::uint32_t slot, const Resolution& r) {
  Job& job = jobs_[slot];
  RELAYSIM_ASSERT(job.busy, "a resolution for an idle slot");
  // The moment the URL was decided, not a later reading of the clock: the attempt's start is
  // what W-url holds against the lookup's time and the TTL (see Resolution::at).
  const Time now = r.at;
  // This pod's breaker changes only in its own resolutions (and, open, with time: arm_wake wakes
  // at open_until). A probe's answer that closed it or freed a probe's place lets blocked work be
  // claimed again: look at once, not at the next completion of a slot.
  if (left_blocked_ && !resolver_.breaker().refuses(now)) {
    left_blocked_ = false;
    waker_.arm(now, store_retry_at_, now);
  }
  switch (r.status) {
    case ResolveStatus::not_found:
      finish(slot, Completion{nullptr, Status::failed, Reason::no_url, now, now, now, Duration::zero()});
      return;
    case ResolveStatus::unavailable:
      defer(slot, now);
      return;
    case ResolveStatus::found:
      break;
  }
  // The lookup may have taken until past the deadline: no attempt may start after it.
  if (past_deadline(now, job.row.deadline_at) && !planted(mutant::expired_backlog_attempted)) {
    finish(slot, Completion{nullptr, Status::dead_lettered, Reason::deadline, now, now, now, Duration::zero()});
    return;
  }
  // A pod paused past its claim's lease wakes to a claim that another pod may hold by now. Its
  // writes are fenced by the claim's token (those above are safe: refused if the claim moved on),
  // but a send is not: it sends nothing and leaves the request as the store has it -- in flight
  // under an expired lease, for the next claim to take.
  if (clock_.now() >= job.row.due_at && !planted(mutant::send_after_lease)) {
    release(slot);
    return;
  }
  AttemptRow& a = job.attempt;
  a.request = job.row.id;
  a.number = job.row.attempts + 1;
  a.pod = pod_;
  a.claim_token = job.row.claim_token;
  a.started_at = now;
  if (!planted(mutant::attempt_reuses_url) || a.resolved_url.empty()) a.resolved_url.assign(r.url);
  a.serviceb_version = r.version;
  job.webhook_id = webhook_id_for(planted(mutant::webhook_id_per_attempt) ? job.row.id * 1000 + a.number : job.row.id);
  events_.emit(AttemptStarted{pod_, job.row, a.number, r.url, r.version, now});
  const HttpHeader headers[] = {{kWebhookIdHeader, job.webhook_id}};
  // Its lease's end (the in-flight row's due time) is the latest it may start.
  http_.send(HttpRequest{a.resolved_url, headers, job.row.payload, job.row.cxid, job.row.due_at}, config_.http_timeout,
             [this, slot](const HttpResult& h) { on_response(slot, h); });
}

void Dispatcher::defer(std::uint32_t slot, Time now) {
  Job& job = jobs_[slot];
  RELAYSIM_ASSERT(job.busy, "a deferral for an idle slot");
  // A deferral is due after now; when even the next instant is past the deadline, nothing may
  // happen later, so the request is dead-lettered now.
  if (past_deadline(now + Duration{1}, job.row.deadline_at)) {
    finish(slot, Completion{nullptr, Status::dead_lettered, Reason::deadline, now, now, now, Duration::zero()});
    return;
  }
  const Duration delay = next_delay(config_.dependency_backoff, job.row.deferrals + 1, Duration::zero(), rng_);
  const Time due = planted(mutant::deferral_ignores_deadline) ? now + delay : std::min(now + delay, job.row.deadline_at);
  finish(slot, Completion{nullptr, Status::blocked, Reason::none, now, due, job.row.not_before, job.row.last_delay});
}

void Dispatcher::on_response(std::uint32_t slot, const HttpResult& h) {
  Job& job = jobs_[slot];
  RELAYSIM_ASSERT(job.busy, "a response for an idle slot");
  const Time now = clock_.now();
  AttemptRow& a = job.attempt;
  a.finished_at = now;
  a.error = h.error;
  a.http_status = h.error == NetError::none ? h.status : 0;
  a.detail.assign(h.detail);
  Classification c = classify(config_.classification, h);
  if (planted(mutant::retry_terminal_4xx) && c.verdict == Verdict::terminal) c = {Verdict::retry, Reason::none};
  events_.emit(AttemptFinished{pod_, a, h, c.verdict});
  switch (c.verdict) {
    case Verdict::delivered:
      finish(slot, Completion{&a, Status::delivered, Reason::ok, now, now, now, Duration::zero()});
      return;
    case Verdict::terminal:
      finish(slot, Completion{&a, Status::failed, c.reason, now, now, now, Duration::zero()});
      return;
    case Verdict::retry: {
      const RetryPlan plan = plan_retry(config_.retry, a.number + (planted(mutant::backoff_step_off_by_one) ? 1 : 0), job.row.last_delay,
                                        h.error == NetError::none ? h.retry_after : Duration{-1}, now,
                                        job.row.deadline_at, rng_);
      finish(slot, Completion{&a, Status::pending, Reason::none, now, plan.due_at, plan.not_before, plan.delay});
      return;
    }
  }
}

void Dispatcher::finish(std::uint32_t slot, const Completion& completion) {
  Job& job = jobs_[slot];
  RELAYSIM_ASSERT(job.busy, "finishing an idle slot");
  RELAYSIM_ASSERT(!completion.notify, "the dispatcher decides which ends are noticed");
  // A failure is noticed to its tenant: the notice is written with it, and sent by the relay.
  Completion c = completion;
  c.notify = c.status == Status::failed ||
             (c.status == Status::dead_lettered && !planted(mutant::dead_letter_not_notified));
  bool applied = false;
  bool failed = false;
  try {
    applied = store_.complete(job.row.id, job.row.claim_token, c);
  } catch (const StoreError& e) {
    // Nothing was recorded: the request stays in flight under this claim until its lease
    // expires, and then another claim rescues it.
    failed = true;
    store_failed(StoreOp::complete, e.failure());
  }
  events_.emit(Completed{pod_, job.row, c, applied, failed});
  if (applied && c.notify) noticed_();
  release(slot);
}

void Dispatcher::release(std::uint32_t slot) {
  RELAYSIM_ASSERT(slot < jobs_.size(), "a slot of this dispatcher");
  Job& job = jobs_[slot];
  RELAYSIM_ASSERT(job.busy, "releasing an idle slot");
  job.busy = false;
  slots_.release(clock_.now());
  free_.push_back(slot);
  RELAYSIM_ASSERT(free_.size() <= jobs_.size(), "no slot is free twice");
  pump();
}

}  // namespace relaysim::webhook
