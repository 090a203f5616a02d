// Events: what the webhook model tells its observers (see model/core/events.h). The model works
// with no sink attached; the simulator's oracle, metrics and fingerprint attach here, the live
// shell logs. Each event's `mix` says what of it counts towards a run's fingerprint.
#pragma once

#include <string_view>

#include "model/core/events.h"
#include "model/resilience/breaker.h"
#include "model/webhook/classifier.h"
#include "model/webhook/ports.h"
#include "model/webhook/store.h"
#include "model/webhook/types.h"

namespace relaysim::webhook {

// A create call was answered (created, duplicate or conflict).
struct Ingested {
  PodId pod;
  const NewRequest& request;
  const CreateResult& result;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(1);
    fp.mix(result.id);
    fp.mix(static_cast<std::uint64_t>(result.outcome));
    fp.mix(at);
  }
};

struct Claimed {
  PodId pod;
  const RequestRow& row;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(2);
    fp.mix(row.id);
    fp.mix(pod);
  }
};

struct AttemptStarted {
  PodId pod;
  const RequestRow& row;
  std::uint32_t number;
  std::string_view url;
  std::uint64_t serviceb_version;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(3);
    fp.mix(row.id);
    fp.mix(number);
    fp.mix(serviceb_version);
    fp.mix(at);
  }
};

struct AttemptFinished {
  PodId pod;
  const AttemptRow& attempt;
  const HttpResult& result;
  Verdict verdict;
};

// A claim ended. `applied` is false when the claim had been fenced off (stale token) or when the
// store failed (`failed`): then the request stays in flight until its lease expires and another
// claim rescues it.
struct Completed {
  PodId pod;
  const RequestRow& row;
  const Completion& completion;
  bool applied;
  bool failed = false;
  void mix(Fingerprint& fp) const {
    fp.mix(4);
    fp.mix(row.id);
    fp.mix(static_cast<std::uint64_t>(completion.status) << 8 | static_cast<std::uint64_t>(failed ? 1 : 0) << 7 |
           static_cast<std::uint64_t>(completion.reason) << 1 | (applied ? 1 : 0));
    fp.mix(completion.at);
    fp.mix(completion.due_at);
  }
};

// A store call failed (busy, full, an I/O error): it changed nothing.
struct StoreFailed {
  PodId pod;
  StoreOp op;
  StoreFailure failure;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(10);
    fp.mix(pod);
    fp.mix(static_cast<std::uint64_t>(op) << 8 | static_cast<std::uint64_t>(failure));
    fp.mix(at);
  }
};

// A manual replay was answered by the store: `replayed` put the terminal request back to pending
// with the fresh deadline `deadline_at`; `not_found` and `not_terminal` changed nothing.
struct Replayed {
  PodId pod;
  RequestId id;
  ReplayOutcome outcome;
  Time deadline_at;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(11);
    fp.mix(id);
    fp.mix(static_cast<std::uint64_t>(outcome));
    fp.mix(at);
  }
};

// A notice went out to the tenant that its request failed or was dead-lettered (sends above 1:
// again, after a sender died before removing it from the outbox).
struct TenantNotified {
  PodId pod;
  const Notice& notice;
  Time at;
};

struct UrlLookedUp {
  PodId pod;
  std::string_view cxid;
  bool cache_hit;
  Time at;
};

// A ServiceB lookup sent at `sent_at` ended at `at` (the moment the breaker recorded its result):
// found (with the URL's `version`), not found, or an error (a failure or a timeout). The simulator
// knows this from its world; the live shell logs it so that a live run can be judged the same way.
struct LookupFinished {
  PodId pod;
  std::string_view cxid;
  LookupStatus status;
  std::uint64_t version;
  Time sent_at;
  Time at;
};

struct BreakerChanged {
  PodId pod;
  BreakerState from;
  BreakerState to;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(5);
    fp.mix(pod);
    fp.mix(static_cast<std::uint64_t>(to));
    fp.mix(at);
  }
};

using Events = EventBus<Ingested, Claimed, AttemptStarted, AttemptFinished, Completed, TenantNotified, UrlLookedUp,
                        LookupFinished, BreakerChanged, StoreFailed, Replayed>;

}  // namespace relaysim::webhook
