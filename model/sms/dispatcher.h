// Dispatcher: a pod's send path and the async workers that feed it.
//
// One claim of one message goes, in the order the seed's decorators wrap a provider:
//   limit    the business's and the cluster's shared limits (model/resilience/shared_limiter.h);
//            a message they hold back goes back to the store for later, never dropped;
//   route    the Router picks a provider the claim has not tried;
//   submit   to the provider (Providers port), with the send timeout;
//   decide   what follows (model/sms/submit.h): submitted; fail over within the claim after a
//            certain refusal; retry (in this pod's memory while the claim lasts, unless the
//            business retries cross-process; else through the store); unknown after an ambiguous
//            outcome — resent later on the same provider, never elsewhere; or failed.
// A message whose earlier outcome is unknown stays pinned to its provider until it is certain.
// A marketing message passes the marketing rules (model/sms/marketing.h) when it is claimed and
// again just before each submit, the frequency cap only then.
//
// The workers (concurrency_per_pod of them) claim what is due from the store, a campaign's next
// chunk first (model/sms/campaigns.h), and sleep until the next due time. Every non-final message
// has a due time, so their claims are also the compensation scan: a message whose sender crashed,
// whose outcome was ambiguous, or whose receipt is overdue comes due and is resent, or ended. A
// sync send (model/sms/ingest.h) takes the same path in its client's request, outside the
// workers' count.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/core/concurrency_limit.h"
#include "model/core/folded_loop.h"
#include "model/core/function.h"
#include "model/core/slot_pool.h"
#include "model/resilience/shared_limiter.h"
#include "model/sms/campaigns.h"
#include "model/sms/pod.h"
#include "model/sms/routing.h"
#include "model/store/due_waker.h"

namespace relaysim::sms {

using AnswerCallback = InplaceFunction<void(const SendAnswer&), 48>;

class Dispatcher {
 public:
  // `businesses[b - 1]` is business b's policy; a business beyond the span gets `others`.
  Dispatcher(Pod& pod, std::span<const BusinessPolicy> businesses, const BusinessPolicy& others, ModeSwitch& mode,
             Campaigns& campaigns);
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Claims what is due now while the workers have room, and sleeps until the next due time.
  void start() { pump(); }
  // Work may be due now that the workers were not told of.
  void nudge() { pump(); }
  // Claims nothing more (a process draining before it exits): the claims in progress finish,
  // and what is due waits for another pod.
  void stop() { stopped_ = true; }

  // Sends the single message `m` in its client's request: it was accepted by `accept` (result
  // `r`) already claimed by this pod, and `done` gets `a` completed by the first outcome.
  void send_sync(const NewMessage& m, const AcceptRequest& accept, const AcceptResult& r, SendPath path,
                 const SendAnswer& a, AnswerCallback done);

  // A provider's delivery receipt for message `id`.
  void receipt(MessageId id, ProviderId provider, bool delivered);

  const Router& router() const { return router_; }
  std::uint32_t in_flight() const { return workers_.busy() + sync_busy_; }

 private:
  struct Job {
    MessageRow row;
    Status prior = Status::pending;
    SendPath path = SendPath::async;
    ProviderMask tried = 0;
    ProviderId provider = kNoProvider;
    std::uint16_t submits = 0;   // made under this claim
    bool pinned = false;         // an earlier outcome is unknown: only row.provider may be tried
    bool accepted = false;       // a provider certainly accepted it under this claim
    bool answered = true;        // sync: the client has its answer
    std::uint8_t limit_stage = 0;  // 0: the business's limit next, 1: the cluster's, 2: done
    bool waited = false;           // a limit answered later: the claim may have ended meanwhile
    Time lease_ends{};
    Time started{};              // of the submit in flight
    AnswerCallback answer;       // sync: the waiting client
    SendAnswer reply;            // sync: the answer so far
    TimerId retry_timer{};
  };

  void pump();
  void arm_wake(Time now);
  std::uint32_t new_job();
  void accepted_row(const NewMessage& m, const AcceptRequest& accept, const AcceptResult& r, MessageRow& row) const;
  void begin(std::uint32_t slot);
  // The marketing rules for a marketing job (with the frequency cap when `take_cap`): true when
  // it may go on; otherwise the job is finished (deferred or suppressed).
  bool marketing_allows(std::uint32_t slot, bool take_cap);
  // Whether the job's claim still holds the message (after a limit's answer came later); if not,
  // the job is finished, fenced out, and false.
  bool still_claimed(std::uint32_t slot);
  void limit(std::uint32_t slot);
  void limited(std::uint32_t slot, BusinessId business, const SharedLimiter& limiter, const SharedDecision& d);
  void submit(std::uint32_t slot);
  void on_result(std::uint32_t slot, SubmitClass outcome);
  void finish(std::uint32_t slot, const Completion& c);
  void answer(std::uint32_t slot, Answer a);
  SharedLimiter* business_limiter(BusinessId business);
  const BusinessPolicy& policy(BusinessId business) const;
  Completion completion(const Job& job, Status status, Reason reason, Time due) const;

  Pod& pod_;
  std::span<const BusinessPolicy> businesses_;
  const BusinessPolicy& others_;
  ModeSwitch& mode_;
  Campaigns& campaigns_;
  Router router_;
  std::unique_ptr<SharedLimiter> cluster_limit_;
  std::vector<std::unique_ptr<SharedLimiter>> business_limits_;  // business - 1

  StableSlotPool<Job> jobs_;  // jobs stay put while callbacks hold their slots
  ConcurrencyLimit workers_;  // concurrency_per_pod: the async workers sending at once
  std::uint32_t sync_busy_ = 0;
  bool stopped_ = false;
  FoldedLoop loop_;
  std::uint32_t shared_submits_ = 0;  // only for the retry_counter_shared mutant
  DueWaker waker_;
};

}  // namespace relaysim::sms
