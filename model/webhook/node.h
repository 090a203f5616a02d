// Node: one pod of the webhook platform — its ingest, URL resolver, dispatcher and notice relay, wired from the
// configuration and the ports the shell provides.
//
// This is the one place the pieces are assembled, so the simulator's pods and the live service
// run the same wiring (what the simulator proves is what ships). A node holds only
// in-memory state (the URL cache, the breaker, in-flight attempts); everything durable is in the
// Store, which outlives it. Destroying a node is a crash: nothing it owed is completed, and its
// leased requests are rescued by others when their leases expire.
#pragma once

#include "model/core/http.h"
#include "model/core/ports.h"
#include "model/core/random.h"
#include "model/webhook/config.h"
#include "model/webhook/dispatcher.h"
#include "model/webhook/events.h"
#include "model/webhook/ingest.h"
#include "model/webhook/notice_relay.h"
#include "model/webhook/ports.h"
#include "model/webhook/store.h"
#include "model/webhook/url_resolver.h"

namespace relaysim::webhook {

// What a node runs on. Every reference must outlive the node.
struct NodePorts {
  Clock& clock;
  Timers& timers;
  Rng& rng;
  HttpClient& http;
  UrlDirectory& directory;
  Store& store;
  Events& events;
  NoticeChannel& notices;
};

class Node {
 public:
  Node(PodId pod, const PlatformConfig& config, NodePorts ports);
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Starts delivering: claims what is due now (requests and notices) and sleeps until the next
  // due time.
  void start() {
    dispatcher_.start();
    relay_.pump();
  }
  // Work may be due that this node was not told of: another process sharing the store created it,
  // or a notice's lease expired in a process that died.
  void nudge() {
    dispatcher_.nudge();
    relay_.pump();
  }
  // Claims no more requests; what is in flight finishes (see Dispatcher::stop). The relay goes on:
  // a failure that finishes now writes a notice, which must still go out before the process ends.
  void stop() { dispatcher_.stop(); }

  Ingest& ingest() { return ingest_; }
  const UrlResolver& resolver() const { return resolver_; }
  const Dispatcher& dispatcher() const { return dispatcher_; }

 private:
  UrlResolver resolver_;
  NoticeRelay relay_;
  Dispatcher dispatcher_;
  Ingest ingest_;
};

// The resolver's part of the platform's configuration.
ResolverConfig resolver_config(const PlatformConfig& config);

}  // namespace relaysim::webhook
