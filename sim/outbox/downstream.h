// SimDownstream: the simulated service a consumer's handling changes, behind the Downstream port
// (model/outbox/ports.h). It applies each message's effect to its own database through the
// model's inbox (model/outbox/inbox.h) — the real code, on the scenario's store kind.
//
// A call travels half its latency there (times any slowdown), meets its fate, and its answer
// travels the other half back. Fates, from the scenario and the seed: refused before anything is
// applied (`error_rate`, an `error` outage: certainly not applied), rejected for good
// (`rejection_rate`), swallowed (a `timeout` outage), applied with the answer lost
// (`lost_answers`: the caller times out though it is applied), or the handler dying after writing
// the effect and before it finishes (`deaths`: whether anything stays applied is the inbox code's
// business). Ground truth: an EffectApplied event for every effect its database committed.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/outbox/inbox.h"
#include "model/outbox/ports.h"
#include "sim/kernel/kernel.h"
#include "sim/outbox/truth.h"
#include "sim/scenario/schema.h"
#include "sim/world/distribution.h"
#include "sim/world/process.h"

namespace relaysim::sim::outbox {

struct DownstreamSpec {
  LatencySpec latency{std::chrono::milliseconds(5), std::chrono::milliseconds(50)};
  double error_rate = 0.0;
  double rejection_rate = 0.0;
  double lost_answers = 0.0;
  double deaths = 0.0;
  std::vector<Outage> outages;
  std::vector<Slowdown> slowdowns;
  bool operator==(const DownstreamSpec&) const = default;
};
const Schema<DownstreamSpec>& downstream_schema();

class SimDownstream {
 public:
  SimDownstream(const DownstreamSpec& spec, Kernel& kernel, std::uint64_t seed, relaysim::outbox::EffectStore& store,
                WorldEvents& events);
  SimDownstream(const SimDownstream&) = delete;
  SimDownstream& operator=(const SimDownstream&) = delete;

  void handle(Process& caller, std::uint32_t pod, const Record& record, Duration timeout,
              relaysim::outbox::Downstream::HandleCallback done);
  relaysim::outbox::EffectStore& store() { return store_; }

 private:
  enum class Fate : std::uint8_t { apply, lose_answer, die, fail, reject, swallow };
  void arrive(const Record& record, std::uint32_t pod, Fate fate);

  DownstreamSpec spec_;
  Kernel& kernel_;
  Latency latency_;
  Rng rng_;
  relaysim::outbox::EffectStore& store_;
  WorldEvents& events_;
};

}  // namespace relaysim::sim::outbox
