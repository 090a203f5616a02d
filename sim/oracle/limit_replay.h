// LimitReplay: the four rate-limiting algorithms of model/resilience/limiters.h judged from the
// same definitions as ReferenceLimiter (sim/oracle/limiter_reference.h), in constant amortised
// time per call, so an oracle can replay every decision of a whole run — hundreds of thousands
// per key — against them. It shares no code with the model beyond the spec; its tests compare
// it with ReferenceLimiter decision by decision.
//
// How each definition is kept without the whole history:
//  - sliding_log: the admissions of the last window, oldest first, and their members;
//  - sliding_counter: the costs admitted in the current and the previous aligned window;
//  - token_bucket and gcra: the bucket is short of `cost` tokens iff for some earlier admission s,
//    A[s, now] * window - limit * (now - s) > (burst - cost) * window. With
//    G = max over s of (A[s, now] * window + limit * s), recording `c` at t makes
//    G' = c * window + max(G, limit * t), and the test reads G - limit * now.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>

#include "model/core/assert.h"
#include "model/resilience/limiters.h"
#include "sim/oracle/limiter_reference.h"

namespace relaysim::sim {

class LimitReplay {
 public:
  explicit LimitReplay(const LimiterSpec& spec) : spec_(spec) {
    RELAYSIM_ASSERT(spec.window > Duration::zero(), "a limit's window is longer than zero");
  }

  using Verdict = ReferenceLimiter::Verdict;
  // As ReferenceLimiter::judge; `now` must not go back between calls.
  Verdict judge(Time now, std::uint32_t cost, std::uint64_t member);
  // Records an admission that counts (not a repeat).
  void record(Time now, std::uint32_t cost, std::uint64_t member);
  // The limit starts afresh (its store lost its data).
  void reset();

  const LimiterSpec& spec() const { return spec_; }

 private:
  __extension__ using i128 = __int128;
  struct Admission {
    Time at;
    std::uint32_t cost;
    std::uint64_t member;
  };
  void forget_before(Time now);     // sliding_log: drop what left the window
  void roll_to(std::int64_t index);  // sliding_counter: move to the aligned window `index`

  LimiterSpec spec_;
  Time last_{};
  // sliding_log
  std::deque<Admission> log_;
  std::uint64_t in_window_ = 0;
  std::unordered_map<std::uint64_t, std::uint32_t> members_;  // member → admissions of it in the window
  // sliding_counter
  std::int64_t index_ = -1;
  std::uint64_t cur_ = 0;
  std::uint64_t prev_ = 0;
  // token_bucket, gcra
  bool any_ = false;
  i128 g_ = 0;
};

}  // namespace relaysim::sim
