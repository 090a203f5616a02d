// Node: one pod of the SMS gateway — its API (auth, then accept), its sync-to-async switch, its
// send path and its async workers, wired from the configuration and the ports the shell provides.
//
// Persist, then send, then compensate:
//  1. send(): the token is checked (Authorizer), then the store accepts the request's messages in
//     one transaction (grant, dedup, quota, insert). Nothing reaches a provider before that.
//  2. A single message due now is sent at once in the client's request (sync) while the
//     sync-to-async switch says so; the client is answered with what the provider said. Otherwise
//     (bulk, scheduled, or async mode) the client is answered `pending` and the pod's async
//     workers, nudged at once, send it from the store.
//  3. Every non-final message has a due time (model/sms/store.h), so the workers' claims are also
//     the compensation scan: a message whose sender crashed (in_flight past its lease), whose
//     outcome was ambiguous (unknown), or whose receipt is overdue (submitted) comes due and is
//     resent, or ended, by whichever pod claims it.
//
// The send path, one claim of one message, in the order the seed's decorators wrap a provider:
//   limit    the business's and the cluster's shared limits (model/resilience/shared_limiter.h);
//            a message they hold back goes back to the store for later (async), never dropped;
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
// Campaigns (campaign()): the request is checked like a send and its filter parsed (a bad one is
// refused with its position); the store keeps the campaign, and the workers of whichever pod
// claims it expand it a chunk of directory users at a time: the filter chooses, users who opted
// out are skipped, and the chunk's messages are accepted in one transaction (charged then). A
// chunk re-expanded after a crash is a duplicate and changes nothing; a chunk the quota cannot
// take whole stops the campaign.
//
// A node holds only in-memory state (router health, the switch, limiter breakers, claims in
// progress); everything durable is in the Store. Destroying a node is a crash: its claims are
// rescued by others when their leases expire.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/core/concurrency_limit.h"
#include "model/core/ports.h"
#include "model/core/random.h"
#include "model/core/slot_pool.h"
#include "model/resilience/kv.h"
#include "model/store/due_waker.h"
#include "model/resilience/shared_limiter.h"
#include "model/sms/auth.h"
#include "model/sms/config.h"
#include "model/sms/directory.h"
#include "model/sms/events.h"
#include "model/sms/ports.h"
#include "model/sms/routing.h"
#include "model/sms/store.h"
#include "model/sms/sync_async.h"

namespace relaysim::sms {

// What a node runs on. Every reference must outlive the node.
struct NodePorts {
  Clock& clock;
  Timers& timers;
  Rng& rng;
  Providers& providers;
  KeyValue& kv;
  Directory& directory;
  TokenCodec& codec;
  Store& store;
  Events& events;
};

using AnswerCallback = InplaceFunction<void(const SendAnswer&), 48>;

class Node {
 public:
  // `pod` ≥ 1 (0 means "no pod" to the store). `businesses[b - 1]` is business b's policy; a
  // business beyond the span gets the defaults.
  Node(PodId pod, const PlatformConfig& config, std::span<const BusinessPolicy> businesses, NodePorts ports);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Starts the async workers: claims what is due now and sleeps until the next due time.
  void start() { pump(); }

  // A client's send request. `done` is called exactly once: at once (refused, stored for async
  // sending, a duplicate), or when a synchronous submit has an outcome. It is not called if the
  // node is destroyed first (the client times out).
  void send(const SendRequest& request, AnswerCallback done);

  // A client's campaign request, answered at once (see above).
  CampaignAnswer campaign(const CampaignRequest& request);

  // A provider's delivery receipt for message `id`.
  void receipt(MessageId id, ProviderId provider, bool delivered);

  const SyncAsyncController& switcher() const { return switch_; }
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
  void store_failed(StoreOp op, StoreFailure failure);
  std::uint32_t new_job();
  void begin(std::uint32_t slot);
  // The marketing rules for a marketing job (with the frequency cap when `take_cap`): true when
  // it may go on; otherwise the job is finished (deferred or suppressed).
  bool marketing_allows(std::uint32_t slot, bool take_cap);
  // Whether the job's claim still holds the message (after a limit's answer came later); if not,
  // the job is finished, fenced out, and false.
  bool still_claimed(std::uint32_t slot);
  // The sync half of send(): a job for the accepted message `m`, claimed by this pod, submitted at
  // once; the client waits for its answer.
  void start_sync(const NewMessage& m, const AcceptRequest& accept, const AcceptResult& r, SendPath path,
                  const SendAnswer& a, AnswerCallback done);
  void accepted_row(const NewMessage& m, const AcceptRequest& accept, const AcceptResult& r, MessageRow& row) const;
  // What expanding one chunk of a campaign found, for its CampaignExpanded event.
  struct ChunkTally {
    std::uint64_t chosen = 0;  // users the filter chose
    std::uint64_t quiet = 0;   // messages scheduled past their recipient's quiet hours
    AcceptOutcome outcome = AcceptOutcome::accepted;
    MessageId first = 0;
  };
  void expand();
  // Expands the claimed campaign_ by one chunk: reads it, accepts its messages, and advances the
  // campaign under its claim.
  void expand_chunk(Time now);
  std::size_t read_chunk(const Filter& filter, Time now, CampaignProgress& p, ChunkTally& t);
  bool accept_chunk(Time now, CampaignProgress& p, ChunkTally& t);
  const Filter* filter_of(const CampaignRow& campaign);
  void limit(std::uint32_t slot);
  void limited(std::uint32_t slot, BusinessId business, const SharedLimiter& limiter, const SharedDecision& d);
  void mode_changed(const ModeChange& change, Time now);
  void submit(std::uint32_t slot);
  void on_result(std::uint32_t slot, SubmitClass outcome);
  void finish(std::uint32_t slot, const Completion& c);
  void answer(std::uint32_t slot, Answer a);
  SharedLimiter* business_limiter(BusinessId business);
  const BusinessPolicy& policy(BusinessId business) const;
  Completion completion(const Job& job, Status status, Reason reason, Time due) const;

  PodId pod_;
  const PlatformConfig& config_;
  std::span<const BusinessPolicy> businesses_;
  Clock& clock_;
  Timers& timers_;
  Rng& rng_;
  Providers& providers_;
  KeyValue& kv_;
  Directory& directory_;
  Store& store_;
  Events& events_;
  Authorizer auth_;
  Router router_;
  SyncAsyncController switch_;
  std::unique_ptr<SharedLimiter> cluster_limit_;
  std::vector<std::unique_ptr<SharedLimiter>> business_limits_;  // business - 1

  StableSlotPool<Job> jobs_;  // jobs stay put while callbacks hold their slots
  ConcurrencyLimit workers_;  // concurrency_per_pod: the async workers sending at once
  std::uint32_t sync_busy_ = 0;
  bool pumping_ = false;
  bool repump_ = false;
  Time store_retry_at_{};  // after a failed store call: not before this
  TimerId mode_timer_{};   // async mode's `after` exit
  // Campaign expansion's scratch, reused chunk after chunk, and the filters of the campaigns this
  // pod has expanded (few at a time).
  CampaignRow campaign_;
  std::vector<UserRecord> users_;
  std::vector<std::string> keys_;
  std::vector<NewMessage> chunk_;
  std::vector<std::pair<CampaignId, Filter>> filters_;
  std::uint32_t shared_submits_ = 0;   // only for the retry_counter_shared mutant
  Time campaigns_next_look_{};         // when to ask the store for campaigns next
  std::optional<Time> campaign_due_;   // the earliest campaign due, as last read
  DueWaker waker_;
};

}  // namespace relaysim::sms
