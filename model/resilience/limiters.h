// Limiter: one key's rate limit, by one of four algorithms. The same code runs in a pod's memory
// (a local limit, or the fallback when the shared store is down) and on the shared store itself
// (the simulated Redis applies it atomically, as a Lua script would), so every place that limits
// a rate uses one rule.
//
// The spec is `limit` admissions per `window`; the token bucket and GCRA also take a `burst`. What
// each promises, for any closed interval of length `span` (LimiterSpec::bound says it in code, and
// the oracle checks it):
//  - sliding_log: at most `limit` in any window (t - window, t]; so at most
//    limit * (floor(span / window) + 1). A log entry has a member (the call's name, such as
//    message:attempt); members are unique, so a call retried after its first try took effect is
//    admitted again without being counted twice. A blocked call records nothing.
//  - sliding_counter: two aligned counters, the previous window's weighted by the share of it
//    still inside the sliding window: admitted iff prev * (window - r) / window + cur + cost <=
//    limit, computed exactly (no rounding). At most `limit` per aligned window, so at most
//    limit * (floor(span / window) + 2) — up to twice the limit in a sliding window.
//  - token_bucket: starts full with `burst` tokens and refills continuously at limit/window;
//    admits `cost` iff that many tokens are there. At most burst + floor(limit * span / window).
//  - gcra: a theoretical arrival time advanced by cost * window / limit; admitted iff it stays
//    within burst * window / limit of now. `burst` is how many are admitted at once from rest —
//    redis_rate's convention; redis-cell's `max_burst` is our burst - 1. It makes exactly the same
//    decisions as the token bucket with the same spec, in one timestamp of state.
//
// Arithmetic is integer (128-bit where products need it), so the same calls give the same answers
// on every machine and no bound is broken by rounding. `now` must not go back between calls.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/bounds.h"
#include "model/core/flat_index.h"
#include "model/core/names.h"
#include "model/core/time.h"

namespace relaysim {

enum class LimiterAlgorithm : std::uint8_t { sliding_log, sliding_counter, token_bucket, gcra };
inline constexpr auto kLimiterAlgorithmNames = names<LimiterAlgorithm>({
    {LimiterAlgorithm::sliding_log, "sliding_log"}, {LimiterAlgorithm::sliding_counter, "sliding_counter"},
    {LimiterAlgorithm::token_bucket, "token_bucket"}, {LimiterAlgorithm::gcra, "gcra"}});
constexpr std::string_view to_string(LimiterAlgorithm a) { return kLimiterAlgorithmNames[a]; }

struct LimiterSpec {
  LimiterAlgorithm algorithm = LimiterAlgorithm::gcra;
  std::uint32_t limit = 100;
  Duration window = std::chrono::seconds(1);
  std::uint32_t burst = 0;  // token bucket and GCRA; 0 means `limit`

  // A window past a day or a count past a million is a typo, and keeps the limiters' arithmetic
  // (count x window in nanoseconds) far inside 128 bits; below 1 ms a window is no rate limit.
  static constexpr Bounds<std::uint32_t> kLimit{1, 1'000'000};
  static constexpr Bounds<Duration> kWindow{std::chrono::milliseconds(1), std::chrono::hours(24)};
  static constexpr Bounds<std::uint32_t> kBurst{0, 1'000'000};

  std::uint32_t effective_burst() const { return burst == 0 ? limit : burst; }
  // The most that can be admitted in a closed interval of length `span` (see above).
  std::uint64_t bound(Duration span) const;
  // The largest cost a single call can ever be admitted with.
  std::uint32_t max_cost() const;
  // This limit shared among `n` (a pod's share while the shared store is down): the limit and
  // the burst divided by n, rounded up, so n pods together admit at most n * ceil(limit / n).
  LimiterSpec share(std::uint32_t n) const;
  bool operator==(const LimiterSpec&) const = default;
};

// Every field against its bounds, each error at `key`.field ("platform.limit.window").
void validate(const LimiterSpec& spec, const std::string& key, std::vector<ConfigError>& out);
bool valid(const LimiterSpec& spec);

struct LimitDecision {
  bool admitted = false;
  // Not admitted: how long until the same call would be admitted if nothing else is;
  // Duration::max() when it never can be (cost above max_cost()), or not for longer than a
  // Duration holds (about 292 years). Zero when admitted.
  Duration retry_after{};
};

class Limiter {
 public:
  explicit Limiter(const LimiterSpec& spec);

  // Admits `cost` at `now` if the limit allows it, and records it; a blocked call records
  // nothing. `member` names the call for the sliding log (0: anonymous, never a repeat).
  LimitDecision take(Time now, std::uint32_t cost = 1, std::uint64_t member = 0);
  // What take() would answer, recording nothing.
  LimitDecision peek(Time now, std::uint32_t cost = 1);
  // Records `cost` whatever the limit says: what a client that checks, then sets, does.
  void force(Time now, std::uint32_t cost = 1, std::uint64_t member = 0);
  // Forgets everything: the store lost its data.
  void reset();

  const LimiterSpec& spec() const { return spec_; }

 private:
  struct LogEntry {
    Time at;
    std::uint64_t member;
    std::uint32_t cost;
  };
  // Both assume advance(now) ran.
  LimitDecision decide(Time now, std::uint32_t cost);
  void record(Time now, std::uint32_t cost, std::uint64_t member);
  void advance(Time now);

  LimiterSpec spec_;
  std::int64_t window_ns_;
  Time last_{};
  // sliding_log: entries in time order, a ring that grows to the most ever in one window.
  std::vector<LogEntry> log_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  std::uint64_t in_log_ = 0;  // their costs' sum
  FlatIndex members_;         // the named entries' members, so a repeat is found at once
  // sliding_counter
  std::int64_t index_ = 0;
  std::uint64_t prev_ = 0;
  std::uint64_t cur_ = 0;
  Time last_admit_{};  // read only by the planted window_restarts_on_send
  // token_bucket: tokens in units of 1/window_ns of a token, so the refill is `limit` units per
  // nanosecond exactly. gcra: the theoretical arrival time in units of 1/limit ns, so one
  // admission's increment is window_ns units exactly.
  __extension__ using u128 = unsigned __int128;
  u128 tokens_ = 0;
  u128 tat_ = 0;
};

}  // namespace relaysim
