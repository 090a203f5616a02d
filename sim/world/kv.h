// SimKv: the simulated Redis behind the KeyValue port (model/resilience/kv.h), for every system
// that shares limits through one.
//
// A call travels half its latency to the store, is applied there atomically at the store's own
// time (calls apply in the order they arrive), and its answer travels the other half back. What
// can go wrong, all from the scenario and the seed:
//  - an outage: `error` refuses calls (the caller learns `unavailable` after a round trip: the
//    call certainly did not take effect); `timeout` swallows them (the caller times out);
//  - a restart: the store refuses calls for its window, then comes back empty — every limit starts
//    afresh, which is why a restart can let through up to one more limit's worth (the oracle
//    attributes it);
//  - a lost answer: the call took effect, but the caller times out;
//  - a slow answer: latency past the caller's timeout is a timeout too (the call took effect).
//
// Ground truth: every call the store applied is a KvApplied event, every restart a KvRestarted,
// on the store's own bus; the oracle replays them against the limiters' reference.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/core/events.h"
#include "model/core/random.h"
#include "model/core/slot_pool.h"
#include "model/resilience/kv.h"
#include "sim/kernel/kernel.h"
#include "sim/scenario/schema.h"
#include "sim/world/distribution.h"

namespace relaysim::sim {

struct KvSpec {
  LatencySpec latency{std::chrono::microseconds(500), std::chrono::milliseconds(2)};
  std::vector<Outage> outages;
  std::vector<Window> restarts;  // down (refusing) for the window, then back with no data
  double lost_answers = 0.0;     // share of applied calls whose answer never comes
  bool operator==(const KvSpec&) const = default;
};
const Schema<KvSpec>& kv_schema();

// A call the store applied (ground truth).
struct KvApplied {
  std::string_view key;
  const LimiterSpec& spec;
  LimitOp op;
  std::uint32_t cost;
  std::uint64_t member;
  Time at;                 // the store's time when it applied the call
  LimitDecision decision;  // what the store answered (force: what it would have said)
  bool answered;           // whether the caller got the answer (false: it timed out)
  void mix(Fingerprint& fp) const {
    fp.mix(hash_bytes(key));
    fp.mix((static_cast<std::uint64_t>(op) << 33) | (std::uint64_t{cost} << 1) | (decision.admitted ? 1U : 0U));
    fp.mix(member);
    fp.mix(at);
  }
};
struct KvRestarted {
  Time at;
  std::uint64_t restarts;  // how many so far, this one included
  void mix(Fingerprint& fp) const {
    fp.mix(at);
    fp.mix(restarts);
  }
};
using KvBus = EventBus<KvApplied, KvRestarted>;

class SimKv final : public KeyValue {
 public:
  SimKv(const KvSpec& spec, Kernel& kernel, std::uint64_t seed);
  SimKv(const SimKv&) = delete;
  SimKv& operator=(const SimKv&) = delete;

  // Schedules the restarts on the kernel.
  void install();
  KvBus& bus() { return bus_; }

  void limit(std::string_view key, const LimiterSpec& spec, LimitOp op, std::uint32_t cost, std::uint64_t member,
             Duration timeout, LimitCallback done) override;

  // Whether a call arriving at `t` is refused (an `error` outage or a restart) or swallowed.
  bool refuses(Time t) const;
  bool swallows(Time t) const;
  std::size_t keys() const { return keys_.size(); }
  std::uint64_t restarts() const { return restarts_; }

 private:
  struct Call {
    LimitCallback done;
    KvLimitAnswer answer;  // decided when the call arrives; delivered when it returns
    std::string key;
    LimiterSpec spec;
    LimitOp op = LimitOp::take;
    std::uint32_t cost = 0;
    std::uint64_t member = 0;
    bool answered = false;  // the caller will get the store's answer
  };
  struct KeyState {
    LimiterSpec spec;
    Limiter limiter;
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return hash_bytes(s); }
  };

  void apply(std::uint32_t slot);
  void finish(std::uint32_t slot);

  KvSpec spec_;
  Kernel& kernel_;
  Latency latency_;
  Rng rng_;
  KvBus bus_;
  SlotPool<Call> calls_;
  std::unordered_map<std::string, KeyState, Hash, std::equal_to<>> keys_;
  std::uint64_t restarts_ = 0;
};

}  // namespace relaysim::sim
