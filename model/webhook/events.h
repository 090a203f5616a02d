// Events: what the webhook model tells its observers. The model works without any (NullEvents);
// the simulator's oracle, metrics and trace fingerprint listen here, the live shell logs.
// Calls are synchronous and must not call back into the model.
#pragma once

#include <string_view>

#include "model/resilience/breaker.h"
#include "model/store/store.h"
#include "model/webhook/classifier.h"
#include "model/webhook/types.h"

namespace relaysim::webhook {

class Events {
 public:
  virtual ~Events() = default;
  // A create call was answered (created, duplicate or conflict). `row` is the stored request.
  virtual void ingested(PodId, const NewRequest&, const CreateResult&, Time /*at*/) {}
  virtual void claimed(PodId, const RequestRow&, Time /*at*/) {}
  virtual void attempt_started(PodId, const RequestRow&, std::uint32_t /*number*/, std::string_view /*url*/,
                               std::uint64_t /*serviceb_version*/, Time /*at*/) {}
  virtual void attempt_finished(PodId, const AttemptRow&, const HttpResult&, Verdict) {}
  // A claim ended. `applied` is false when the claim had been fenced off (stale token).
  virtual void completed(PodId, const RequestRow&, const Completion&, bool /*applied*/) {}
  virtual void tenant_notified(const RequestRow&, Status, Reason, Time) {}
  virtual void url_looked_up(PodId, std::string_view /*cxid*/, bool /*cache_hit*/, Time) {}
  virtual void breaker_changed(PodId, BreakerState /*from*/, BreakerState /*to*/, Time) {}
};

class NullEvents final : public Events {};

}  // namespace relaysim::webhook
