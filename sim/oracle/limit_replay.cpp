#include "sim/oracle/limit_replay.h"

#include "model/core/assert.h"

namespace relaysim::sim {

void LimitReplay::forget_before(Time now) {
  while (!log_.empty() && log_.front().at + spec_.window <= now) {
    const Admission& a = log_.front();
    RELAYSIM_ASSERT(in_window_ >= a.cost, "the window holds what it admitted");
    in_window_ -= a.cost;
    if (a.member != 0) {
      const auto it = members_.find(a.member);
      RELAYSIM_ASSERT(it != members_.end(), "a member admitted in the window is counted");
      if (--it->second == 0) members_.erase(it);
    }
    log_.pop_front();
  }
}

void LimitReplay::roll_to(std::int64_t index) {
  RELAYSIM_ASSERT(index >= index_, "aligned windows move forward");
  if (index == index_) return;
  prev_ = index == index_ + 1 ? cur_ : 0;
  cur_ = 0;
  index_ = index;
}

LimitReplay::Verdict LimitReplay::judge(Time now, std::uint32_t cost, std::uint64_t member) {
  RELAYSIM_ASSERT(now >= last_, "judged in time order");
  last_ = now;
  const i128 w = to_ns(spec_.window);
  const i128 limit = spec_.limit;
  switch (spec_.algorithm) {
    case LimiterAlgorithm::sliding_log:
      forget_before(now);
      if (member != 0 && members_.contains(member)) return {true, true};
      return {in_window_ + cost <= spec_.limit, false};
    case LimiterAlgorithm::sliding_counter: {
      const std::int64_t k = to_ns(now) / to_ns(spec_.window);
      roll_to(k);
      const i128 r = to_ns(now) - k * to_ns(spec_.window);
      return {i128{prev_} * (w - r) + (i128{cur_} + cost) * w <= limit * w, false};
    }
    case LimiterAlgorithm::token_bucket:
    case LimiterAlgorithm::gcra: {
      const i128 burst = spec_.effective_burst();
      if (cost > burst) return {false, false};
      if (!any_) return {true, false};
      return {g_ - limit * to_ns(now) <= (burst - cost) * w, false};
    }
  }
  return {};
}

void LimitReplay::record(Time now, std::uint32_t cost, std::uint64_t member) {
  RELAYSIM_ASSERT(now >= last_, "recorded in time order");
  last_ = now;
  switch (spec_.algorithm) {
    case LimiterAlgorithm::sliding_log:
      forget_before(now);
      log_.push_back(Admission{now, cost, member});
      in_window_ += cost;
      if (member != 0) ++members_[member];
      return;
    case LimiterAlgorithm::sliding_counter:
      roll_to(to_ns(now) / to_ns(spec_.window));
      cur_ += cost;
      return;
    case LimiterAlgorithm::token_bucket:
    case LimiterAlgorithm::gcra: {
      const i128 at = i128{spec_.limit} * to_ns(now);
      g_ = i128{cost} * to_ns(spec_.window) + (any_ && g_ > at ? g_ : at);
      any_ = true;
      return;
    }
  }
}

void LimitReplay::reset() {
  log_.clear();
  in_window_ = 0;
  members_.clear();
  index_ = -1;
  cur_ = 0;
  prev_ = 0;
  any_ = false;
  g_ = 0;
}

}  // namespace relaysim::sim
