// LimitChecker: S-limit. Every shared-limit decision replayed against the limit's definition:
//
//   - each call the store (Redis) applied, by key, against sim/oracle/limit_replay.h; all of them
//     start afresh when the store restarts empty (what that lets through is the restart's, not a
//     violation);
//   - each decision a pod took on its local limit while the store was down, against the pod's
//     share of the limit (limit and burst divided among the pods, rounded up), worked out here and
//     not by LimiterSpec::share; a pod's local limits start afresh when it starts or crashes;
//   - the deny policy admits nothing.
//
// Its state is its own. The only events it shares with another checker, a pod's start and crash,
// report nothing, so where it is attached among the oracle's sinks changes no report's order.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/core/events.h"
#include "model/core/random.h"
#include "model/sms/events.h"
#include "model/sms/types.h"
#include "sim/oracle/ledger.h"
#include "sim/oracle/limit_replay.h"
#include "sim/sms/violations.h"
#include "sim/world/kv.h"
#include "sim/world/process.h"

namespace relaysim::sim::sms {

class LimitChecker final : public SinkFor<relaysim::sms::LimitDecided>,
                           public SinkFor<KvApplied>,
                           public SinkFor<KvRestarted>,
                           public SinkFor<ProcessStarted>,
                           public SinkFor<ProcessCrashed> {
 public:
  explicit LimitChecker(Ledger& ledger) : violate_(ledger) {}

  void on(const relaysim::sms::LimitDecided& e) override;
  void on(const KvApplied& e) override;
  void on(const KvRestarted& e) override;
  void on(const ProcessStarted& e) override;
  void on(const ProcessCrashed& e) override;

  // Shared-limit decisions replayed against the definitions (store and local).
  std::uint64_t checks() const { return checks_; }

 private:
  // A pod restarts with fresh local limits.
  void reset_local_limits(relaysim::sms::PodId pod);

  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return hash_bytes(s); }
  };

  Violations violate_;
  // Each shared limit as the store keeps it, by key; each pod's local limits, by business (0: the
  // cluster's).
  std::unordered_map<std::string, LimitReplay, KeyHash, std::equal_to<>> store_limits_;
  std::vector<std::unordered_map<relaysim::sms::BusinessId, LimitReplay>> local_limits_;  // by pod - 1
  std::uint64_t checks_ = 0;
};

}  // namespace relaysim::sim::sms
