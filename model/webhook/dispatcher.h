// Dispatcher: one pod's delivery loop.
//
// It claims due requests from the shared Store while it has a free slot (at most
// concurrency_per_pod at once), and for each: dead-letters it if its deadline has passed,
// resolves the URL (UrlResolver), defers it as blocked_on_dependency if ServiceB cannot answer,
// otherwise makes one HTTP attempt, classifies the result and completes the claim with the next
// state. Completions are fenced by the claim token, so a pod that lost its lease changes nothing.
//
// It never polls: when nothing is due it sleeps until the Store's next due time, and nudge()
// wakes it when new work arrives. While its breaker refuses every ServiceB lookup it leaves the
// blocked requests in the store (claiming one would only defer it again): an open breaker wakes it
// when it lets a probe through; a half-open one with every probe out, as soon as a probe's answer
// frees a probe's place or closes the breaker. A long outage costs a deferral per request, not
// one per request per backoff step. When a store call fails (busy, full, an I/O error) it leaves
// the store alone for `store_retry` and then asks again; a completion that could not be recorded
// leaves its request in flight until the lease expires, when another claim rescues it. A failure
// is written with its tenant's notice (Completion::notify), which the pod's NoticeRelay sends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/core/concurrency_limit.h"
#include "model/core/folded_loop.h"
#include "model/core/function.h"
#include "model/core/http.h"
#include "model/core/ports.h"
#include "model/core/random.h"
#include "model/store/due_waker.h"
#include "model/webhook/config.h"
#include "model/webhook/events.h"
#include "model/webhook/url_resolver.h"

namespace relaysim::webhook {

class Dispatcher {
 public:
  // Called when a completion has just written a notice to the outbox (a failure's, see
  // NoticeRelay).
  using Noticed = InplaceFunction<void(), 16>;
  Dispatcher(PodId pod, const PlatformConfig& config, Store& store, Clock& clock, Timers& timers, Rng& rng,
             UrlResolver& resolver, HttpClient& http, Events& events, Noticed noticed);
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  void start() { pump(); }
  // New work may be due now.
  void nudge() { pump(); }
  // Claims nothing more; the attempts in flight finish and complete as usual (a shell draining
  // before it exits). Cannot be undone.
  void stop() { stopped_ = true; }

  std::uint32_t in_flight() const { return slots_.busy(); }
  // Slot-time spent busy since the pod started (its utilisation, over any window).
  Duration busy_time() const { return slots_.busy_time(clock_.now()); }

 private:
  struct Job {
    bool busy = false;
    RequestRow row;
    std::string webhook_id;
    AttemptRow attempt;
  };

  void pump();
  void begin(std::uint32_t slot);
  void on_resolved(std::uint32_t slot, const Resolution& r);
  void on_response(std::uint32_t slot, const HttpResult& r);
  void defer(std::uint32_t slot, Time now);
  void finish(std::uint32_t slot, const Completion& c);
  void release(std::uint32_t slot);  // frees the slot; the claim is over or was never written to
  void arm_wake(Time now);
  void store_failed(StoreOp op, StoreFailure failure);
  Duration lease() const;
  Claimable claimable(Time now) const;  // which waiting requests a claim may take now

  PodId pod_;
  const PlatformConfig& config_;
  Store& store_;
  Clock& clock_;
  Rng& rng_;
  UrlResolver& resolver_;
  HttpClient& http_;
  Events& events_;
  Noticed noticed_;

  std::vector<Job> jobs_;
  std::vector<std::uint32_t> free_;
  ConcurrencyLimit slots_;  // concurrency_per_pod: slots taken, integrated over time
  FoldedLoop loop_;
  bool stopped_ = false;
  Time store_retry_at_{};  // after a failed store call: not before this
  bool left_blocked_ = false;  // the last pass left blocked work in the store: the breaker refused it
  DueWaker waker_;
};

}  // namespace relaysim::webhook
