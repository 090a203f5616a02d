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

#include "model/core/names.h"
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

// The downstream's behaviour, decided as the simulator decides it: each handling's latency and
// fate, from the scenario and the seed. SimDownstream plays the decisions in virtual time; the
// live world (`relaysim world` for an outbox scenario, live/outbox/world.h) plays them on the wall
// clock, through real HTTP.
class DownstreamFates {
 public:
  enum class Fate : std::uint8_t { apply, lose_answer, die, fail, reject, swallow };
  static constexpr auto kFateNames = names<Fate>({{Fate::apply, "apply"}, {Fate::lose_answer, "lose_answer"},
                                                  {Fate::die, "die"}, {Fate::fail, "fail"},
                                                  {Fate::reject, "reject"}, {Fate::swallow, "swallow"}});
  struct Decision {
    Fate fate = Fate::apply;
    Duration arrives_in{};  // when the handling reaches the downstream (half the round trip)
    relaysim::outbox::Handled answer = relaysim::outbox::Handled::timeout;
    Duration answer_in{};   // when the caller has its answer (the timeout when none comes)
    // Whether it reaches the downstream's database: applied, its answer lost, or its handler dying.
    bool arrives() const { return fate == Fate::apply || fate == Fate::lose_answer || fate == Fate::die; }
  };
  DownstreamFates(const DownstreamSpec& spec, std::uint64_t seed);
  // A handling sent at `now` (time since the run's start) by a caller that waits `timeout`.
  Decision decide(Time now, Duration timeout);
  const DownstreamSpec& spec() const { return spec_; }

 private:
  DownstreamSpec spec_;
  Latency latency_;
  Rng rng_;
};

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
  void arrive(const Record& record, std::uint32_t pod, bool dies);

  DownstreamFates fates_;
  Kernel& kernel_;
  relaysim::outbox::EffectStore& store_;
  WorldEvents& events_;
};

}  // namespace relaysim::sim::outbox
