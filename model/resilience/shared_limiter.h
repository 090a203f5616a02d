// SharedLimiter: one pod's handle on a limit shared by every pod through the key-value store
// (model/resilience/kv.h) — a business's send rate, or the whole cluster's.
//
// Promises:
//  - While the store answers, the store decides, atomically, by its own clock: together the pods
//    admit what one Limiter with the spec would (LimiterSpec::bound).
//  - When the store cannot answer (refused, timed out, or the breaker on it is open), the
//    configured policy decides, and says so (`via`):
//      allow — admit everything (fail open, as Envoy and Notify do by default: unlimited while
//              the store is down, reported as such);
//      deny  — admit nothing (fail closed);
//      local — a Limiter in this pod at spec.share(pods), so N pods admit at most
//              N * ceil(limit / N) by the local limiters' bound, plus what the store admitted.
//    A call that timed out may still have taken effect on the store: the store's count is then
//    higher than what this pod knows, never lower.
//  - A circuit breaker on the store: once it opens, calls go straight to the policy without
//    waiting for a timeout each, until its half-open probes find the store back.
//  - A held call is told when to come back (`retry_after`), and a pod spreads its held calls out
//    instead of sending them all back at once: it remembers the store's last refusal and answers
//    calls before its retry_after held without asking the store (nothing can be admitted sooner:
//    other pods' calls only add to the count), and it gives each held call its own later turn, at
//    this pod's share of the rate (window × pods / limit apart), behind those it already told to
//    wait. So a backlog of held messages costs the store about one call per admission, not one
//    per message per refusal (the thundering herd of a limiter that answers everyone "in 20 ms").
//  - `done` is called exactly once; at once (before take returns) when the breaker skips the
//    store, otherwise when the store answers or the call times out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/core/function.h"
#include "model/core/names.h"
#include "model/core/ports.h"
#include "model/core/slot_pool.h"
#include "model/resilience/breaker.h"
#include "model/resilience/kv.h"
#include "model/resilience/limiters.h"

namespace relaysim {

enum class StoreDownPolicy : std::uint8_t { allow, deny, local };
inline constexpr auto kStoreDownPolicyNames = names<StoreDownPolicy>({
    {StoreDownPolicy::allow, "allow"}, {StoreDownPolicy::deny, "deny"}, {StoreDownPolicy::local, "local"}});
constexpr std::string_view to_string(StoreDownPolicy p) { return kStoreDownPolicyNames[p]; }

struct SharedLimitConfig {
  LimiterSpec spec;
  StoreDownPolicy when_down = StoreDownPolicy::local;
  std::uint32_t pods = 1;  // N, among which `local` shares the limit
  Duration timeout = std::chrono::milliseconds(50);
  BreakerConfig breaker{std::chrono::seconds(10), 5, 0.5, std::chrono::seconds(5), 1};
  bool operator==(const SharedLimitConfig&) const = default;

  static constexpr Bounds<Duration> kTimeout = kPositiveDuration;
};

// The spec, the timeout and the breaker against their bounds, each error at `key`.field (the
// spec's fields directly under `key`, as a scenario writes them).
void validate(const SharedLimitConfig& c, const std::string& key, std::vector<ConfigError>& out);

// How a decision was made.
enum class LimitVia : std::uint8_t { store, local, allow, deny };
inline constexpr auto kLimitViaNames = names<LimitVia>({
    {LimitVia::store, "store"}, {LimitVia::local, "local"}, {LimitVia::allow, "allow"}, {LimitVia::deny, "deny"}});
constexpr std::string_view to_string(LimitVia v) { return kLimitViaNames[v]; }

struct SharedDecision {
  bool admitted = false;
  Duration retry_after{};  // not admitted: when to try again (Duration::max(): never)
  LimitVia via = LimitVia::store;
  KvStatus store = KvStatus::ok;  // what the store said (unavailable also when the breaker skipped it)
  bool remembered = false;        // held by the pod's memory of the store's last refusal, not asked
  Time at{};                      // local: the moment the pod's own limiter decided at
};

class SharedLimiter {
 public:
  using Callback = InplaceFunction<void(const SharedDecision&), 48>;

  SharedLimiter(std::string key, const SharedLimitConfig& config, KeyValue& kv, const Clock& clock);
  SharedLimiter(const SharedLimiter&) = delete;
  SharedLimiter& operator=(const SharedLimiter&) = delete;

  // Asks to admit `cost`; `member` names the call (message:attempt) so a retried take is not
  // counted twice by a sliding log.
  void take(std::uint32_t cost, std::uint64_t member, Callback done);

  const SharedLimitConfig& config() const { return config_; }
  BreakerState breaker_state() const { return breaker_.state(); }

 private:
  struct Pending {
    Callback done;
    Permit permit;
    std::uint32_t cost = 0;
    std::uint64_t member = 0;
  };
  void answered(std::uint32_t slot, const KvLimitAnswer& a);
  void checked(std::uint32_t slot, const KvLimitAnswer& a);  // the planted check-then-set's first half
  void fall_back(std::uint32_t cost, std::uint64_t member, KvStatus store, Callback& done);
  // A held call's turn: not before `earliest`, and after the turns already handed out.
  Duration turn(Time now, Duration earliest);

  std::string key_;
  SharedLimitConfig config_;
  KeyValue& kv_;
  const Clock& clock_;
  CircuitBreaker breaker_;
  Limiter local_;
  SlotPool<Pending> pending_;
  Duration spacing_;          // window × pods / limit: this pod's share of the rate
  Time closed_until_{};       // the store's last refusal holds until then
  std::uint32_t closed_cost_ = 0;
  Time next_turn_{};          // the next turn a held call is given
};

}  // namespace relaysim
