// The ground every part of an SMS node stands on (model/sms/node.h): which pod it is, its
// configuration and ports, the store's rest after a failure, and the sync-to-async switch.
#pragma once

#include "model/core/ports.h"
#include "model/resilience/kv.h"
#include "model/sms/auth.h"
#include "model/sms/config.h"
#include "model/sms/directory.h"
#include "model/sms/events.h"
#include "model/sms/ports.h"
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

// The pod as each part of its node sees it: its ports, which it is, and its configuration. The
// parts share one rest of the store: after any of them sees a store call fail, none asks the
// store again before `store_retry_at`.
struct Pod : NodePorts {
  // `id` ≥ 1 (0 means "no pod" to the store).
  Pod(PodId id, const PlatformConfig& config, const NodePorts& ports);

  // Reports the failure and rests the store for `store_retry`.
  void store_failed(StoreOp op, StoreFailure failure);

  const PodId id;
  const PlatformConfig& config;
  Time store_retry_at{};
};

// The sync-to-async switch (model/sms/sync_async.h) on the pod's clock: every change of mode is
// reported, and async mode is left by itself `after` its entry when the configuration says so.
class ModeSwitch {
 public:
  explicit ModeSwitch(Pod& pod) : pod_(pod), switch_(pod.config.sync_to_async) {}
  ~ModeSwitch();
  ModeSwitch(const ModeSwitch&) = delete;
  ModeSwitch& operator=(const ModeSwitch&) = delete;

  // The path of a send that may go sync.
  SendPath route(Time now);
  // The outcome of a sync or probe submit, judged after it is reported so that a change of mode
  // follows the evidence it rests on.
  void observe(Time now, Duration latency, bool failed, SendPath path);

  const SyncAsyncController& controller() const { return switch_; }

 private:
  void changed(const ModeChange& change, Time now);

  Pod& pod_;
  SyncAsyncController switch_;
  TimerId timer_{};  // async mode's `after` exit
};

}  // namespace relaysim::sms
