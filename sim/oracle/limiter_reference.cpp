#include "sim/oracle/limiter_reference.h"

#include "model/core/assert.h"

namespace relaysim::sim {

namespace {
__extension__ using i128 = __int128;
}

ReferenceLimiter::Verdict ReferenceLimiter::judge(Time now, std::uint32_t cost, std::uint64_t member) const {
  RELAYSIM_ASSERT(history_.empty() || now >= history_.back().at, "judged in time order");
  const i128 w = to_ns(spec_.window);
  const i128 limit = spec_.limit;
  switch (spec_.algorithm) {
    case LimiterAlgorithm::sliding_log: {
      i128 in_window = 0;
      for (const Admission& a : history_) {
        if (a.at + spec_.window <= now) continue;
        if (member != 0 && a.member == member) return {true, true};
        in_window += a.cost;
      }
      return {in_window + cost <= limit, false};
    }
    case LimiterAlgorithm::sliding_counter: {
      const std::int64_t k = to_ns(now) / to_ns(spec_.window);
      i128 cur = 0;
      i128 prev = 0;
      for (const Admission& a : history_) {
        const std::int64_t ka = to_ns(a.at) / to_ns(spec_.window);
        if (ka == k) cur += a.cost;
        if (ka == k - 1) prev += a.cost;
      }
      const i128 r = to_ns(now) - k * to_ns(spec_.window);
      return {prev * (w - r) + (cur + cost) * w <= limit * w, false};
    }
    case LimiterAlgorithm::token_bucket:
    case LimiterAlgorithm::gcra: {
      const i128 burst = spec_.effective_burst();
      if (cost > burst) return {false, false};
      // In units of 1/window of a token: burst * w + limit * (now - s) - A[s, now] * w.
      i128 after = 0;  // A[s, now], summed from the newest admission back
      for (auto it = history_.rbegin(); it != history_.rend(); ++it) {
        after += it->cost;
        const i128 tokens = burst * w + limit * to_ns(now - it->at) - after * w;
        if (tokens < i128{cost} * w) return {false, false};
      }
      return {true, false};
    }
  }
  return {};
}

void ReferenceLimiter::record(Time now, std::uint32_t cost, std::uint64_t member) {
  RELAYSIM_ASSERT(history_.empty() || now >= history_.back().at, "recorded in time order");
  history_.push_back(Admission{now, cost, member});
}

std::int64_t first_bound_violation(const LimiterSpec& spec, const std::vector<TimedCost>& admitted) {
  for (std::size_t j = 0; j < admitted.size(); ++j) {
    RELAYSIM_ASSERT(j == 0 || admitted[j].at >= admitted[j - 1].at, "admissions are listed in time order");
    std::uint64_t sum = 0;
    for (std::size_t i = j + 1; i-- > 0;) {
      sum += admitted[i].cost;
      if (sum > spec.bound(admitted[j].at - admitted[i].at)) return static_cast<std::int64_t>(j);
    }
  }
  return -1;
}

}  // namespace relaysim::sim
