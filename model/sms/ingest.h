// Ingest: a pod's API for clients — sends and campaigns, each checked (the token, then the
// store's acceptance) before anything reaches a provider.
//
// Persist, then send: send() checks the token (Authorizer), then the store accepts the request's
// messages in one transaction (grant, dedup, quota, insert). A single message due now goes sync
// while the sync-to-async switch says so: it is sent in the client's request and the client is
// answered with what the provider said (model/sms/dispatcher.h). Otherwise (bulk, scheduled,
// marketing, or async mode) the client is answered `pending` and the workers, nudged at once,
// send it from the store. campaign() checks a campaign like a send and parses its filter (a bad
// one is refused with its position); the store keeps it and the workers expand it
// (model/sms/campaigns.h).
#pragma once

#include "model/sms/auth.h"
#include "model/sms/campaigns.h"
#include "model/sms/dispatcher.h"
#include "model/sms/pod.h"

namespace relaysim::sms {

class Ingest {
 public:
  Ingest(Pod& pod, ModeSwitch& mode, Dispatcher& dispatcher, Campaigns& campaigns)
      : pod_(pod), auth_(pod.codec, pod.clock), mode_(mode), dispatcher_(dispatcher), campaigns_(campaigns) {}
  Ingest(const Ingest&) = delete;
  Ingest& operator=(const Ingest&) = delete;

  // A client's send request. `done` is called exactly once: at once (refused, stored for async
  // sending, a duplicate), or when a synchronous submit has an outcome. It is not called if the
  // node is destroyed first (the client times out).
  void send(const SendRequest& request, AnswerCallback done);

  // A client's campaign request, answered at once.
  CampaignAnswer campaign(const CampaignRequest& request);

 private:
  Pod& pod_;
  Authorizer auth_;
  ModeSwitch& mode_;
  Dispatcher& dispatcher_;
  Campaigns& campaigns_;
};

}  // namespace relaysim::sms
