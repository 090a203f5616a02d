// Node: one pod of the SMS gateway — its ingest, dispatcher and campaign expansion over the
// sync-to-async switch, wired from the configuration and the ports the shell provides.
//
// Persist, then send, then compensate:
//  1. Ingest (model/sms/ingest.h) checks a client's token, then the store accepts the request's
//     messages in one transaction. Nothing reaches a provider before that.
//  2. A single message due now is sent at once in the client's request while the sync-to-async
//     switch (model/sms/pod.h) says so; everything else is answered `pending` and sent by the
//     dispatcher's workers from the store (model/sms/dispatcher.h, which also tells the send
//     path: limits, routing, submit, decide).
//  3. Every non-final message has a due time (model/sms/store.h), so the workers' claims are also
//     the compensation scan: a message whose sender crashed, whose outcome was ambiguous, or
//     whose receipt is overdue comes due and is resent, or ended, by whichever pod claims it.
//  Campaigns (model/sms/campaigns.h) are expanded by the same workers a chunk at a time.
//
// This is the one place the parts are assembled, so the simulator's pods and a live service run
// the same wiring. A node holds only in-memory state (router health, the switch, limiter
// breakers, claims in progress); everything durable is in the Store. Destroying a node is a
// crash: its claims are rescued by others when their leases expire.
#pragma once

#include <span>
#include <utility>

#include "model/sms/campaigns.h"
#include "model/sms/dispatcher.h"
#include "model/sms/ingest.h"
#include "model/sms/pod.h"

namespace relaysim::sms {

class Node {
 public:
  // `pod` ≥ 1 (0 means "no pod" to the store). `businesses[b - 1]` is business b's policy; a
  // business beyond the span gets `others` (a live gateway's businesses apply while it runs, so
  // it names one policy for all). Every reference must outlive the node.
  Node(PodId pod, const PlatformConfig& config, std::span<const BusinessPolicy> businesses, NodePorts ports,
       const BusinessPolicy& others = kDefaultBusinessPolicy)
      : pod_(pod, config, ports),
        mode_(pod_),
        campaigns_(pod_),
        dispatcher_(pod_, businesses, others, mode_, campaigns_),
        ingest_(pod_, mode_, dispatcher_, campaigns_) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Starts the async workers: claims what is due now and sleeps until the next due time.
  void start() { dispatcher_.start(); }

  // A client's send request (see Ingest::send).
  void send(const SendRequest& request, AnswerCallback done) { ingest_.send(request, std::move(done)); }
  // A client's campaign request, answered at once.
  CampaignAnswer campaign(const CampaignRequest& request) { return ingest_.campaign(request); }
  // A provider's delivery receipt for message `id`.
  void receipt(MessageId id, ProviderId provider, bool delivered) { dispatcher_.receipt(id, provider, delivered); }
  // Another process sharing the store may have made work due: look now.
  void nudge() { dispatcher_.nudge(); }
  // Claims nothing more; what is in flight finishes (Dispatcher::stop).
  void stop() { dispatcher_.stop(); }

  const SyncAsyncController& switcher() const { return mode_.controller(); }
  const Dispatcher& dispatcher() const { return dispatcher_; }

 private:
  Pod pod_;
  ModeSwitch mode_;
  Campaigns campaigns_;
  Dispatcher dispatcher_;
  Ingest ingest_;
};

}  // namespace relaysim::sms
