#include "model/resilience/limiters.h"

#include "model/resilience/kv.h"

#include <algorithm>
#include <cstdint>

#include "model/core/assert.h"
#include "model/resilience/mutants.h"

namespace relaysim {

namespace {
__extension__ using u128 = unsigned __int128;

u128 ceil_div(u128 a, u128 b) { return (a + b - 1) / b; }
// A wait in nanoseconds; past what a Duration holds (about 292 years: a cost no refill reaches in
// a lifetime), never: Duration::max(), as for a cost above max_cost().
Duration ns(u128 v) {
  return v > static_cast<u128>(INT64_MAX) ? Duration::max() : Duration{static_cast<std::int64_t>(v)};
}
}  // namespace

void validate(const LimiterSpec& spec, const std::string& key, std::vector<ConfigError>& out) {
  check(spec.limit, LimiterSpec::kLimit, key + ".limit", out);
  check(spec.window, LimiterSpec::kWindow, key + ".window", out);
  check(spec.burst, LimiterSpec::kBurst, key + ".burst", out);
}

bool valid(const LimiterSpec& spec) {
  return LimiterSpec::kLimit.holds(spec.limit) && LimiterSpec::kWindow.holds(spec.window) && LimiterSpec::kBurst.holds(spec.burst);
}

std::uint64_t LimiterSpec::bound(Duration span) const {
  RELAYSIM_ASSERT(span >= Duration::zero(), "a span is not negative");
  RELAYSIM_ASSERT(window > Duration::zero(), "the window is longer than zero");
  const auto windows = static_cast<std::uint64_t>(to_ns(span) / to_ns(window));
  switch (algorithm) {
    case LimiterAlgorithm::sliding_log: return limit * (windows + 1);
    case LimiterAlgorithm::sliding_counter: return limit * (windows + 2);
    case LimiterAlgorithm::token_bucket:
    case LimiterAlgorithm::gcra:
      return effective_burst() +
             static_cast<std::uint64_t>(u128{limit} * static_cast<std::uint64_t>(to_ns(span)) /
                                        static_cast<std::uint64_t>(to_ns(window)));
  }
  return 0;
}

std::uint32_t LimiterSpec::max_cost() const {
  switch (algorithm) {
    case LimiterAlgorithm::sliding_log:
    case LimiterAlgorithm::sliding_counter: return limit;
    case LimiterAlgorithm::token_bucket:
    case LimiterAlgorithm::gcra: return effective_burst();
  }
  return 0;
}

LimiterSpec LimiterSpec::share(std::uint32_t n) const {
  RELAYSIM_ASSERT(n >= 1, "shared among at least one");
  LimiterSpec s = *this;
  if (planted(mutant::limiter_share_undivided)) return s;
  s.limit = (limit + n - 1) / n;
  if (burst != 0) s.burst = (burst + n - 1) / n;
  return s;
}

Limiter::Limiter(const LimiterSpec& spec) : spec_(spec), window_ns_(to_ns(spec.window)) {
  RELAYSIM_ASSERT(valid(spec), "a limiter needs a spec within its bounds");
  reset();
}

void Limiter::reset() {
  last_ = Time{};
  head_ = size_ = 0;
  in_log_ = 0;
  members_ = FlatIndex{};
  index_ = 0;
  prev_ = cur_ = 0;
  last_admit_ = Time{};
  tokens_ = u128{spec_.effective_burst()} * static_cast<std::uint64_t>(window_ns_);  // starts full
  tat_ = 0;
}

void Limiter::advance(Time now) {
  RELAYSIM_ASSERT(now >= last_, "a limiter's time does not go back");
  const std::int64_t elapsed = to_ns(now - last_);
  last_ = now;
  switch (spec_.algorithm) {
    case LimiterAlgorithm::sliding_log:
      // Entries at or before now - window have left the window (t - window, t].
      while (size_ > 0 && now - log_[head_].at >= spec_.window) {  // (at + window could pass int64's end)
        in_log_ -= log_[head_].cost;
        if (log_[head_].member != 0) members_.erase(log_[head_].member, 1);
        head_ = (head_ + 1) % log_.size();
        --size_;
      }
      return;
    case LimiterAlgorithm::sliding_counter: {
      std::int64_t index = to_ns(now) / window_ns_;
      // The planted bug: the window restarts from the latest send, as a counter whose expiry is
      // refreshed on every increment does, so it never closes for a steady sender.
      if (planted(mutant::window_restarts_on_send) && cur_ > 0 && now - last_admit_ < spec_.window) index = index_;
      if (index == index_ + 1) {
        prev_ = cur_;
        cur_ = 0;
      } else if (index != index_) {
        prev_ = cur_ = 0;
      }
      index_ = index;
      return;
    }
    case LimiterAlgorithm::token_bucket: {
      const u128 capacity = u128{spec_.effective_burst()} * static_cast<std::uint64_t>(window_ns_);
      tokens_ = std::min(capacity, tokens_ + u128{spec_.limit} * static_cast<std::uint64_t>(elapsed));
      return;
    }
    case LimiterAlgorithm::gcra:
      return;
  }
}

LimitDecision Limiter::decide(Time now, std::uint32_t cost) {
  RELAYSIM_ASSERT(cost >= 1, "a call costs at least one");
  if (cost > spec_.max_cost()) return {false, Duration::max()};
  const auto w = static_cast<std::uint64_t>(window_ns_);
  switch (spec_.algorithm) {
    case LimiterAlgorithm::sliding_log: {
      if (in_log_ + cost <= spec_.limit) return {true, {}};
      // Wait until enough of the oldest entries have left.
      std::uint64_t left = in_log_;
      for (std::size_t i = 0; i < size_; ++i) {
        const LogEntry& e = log_[(head_ + i) % log_.size()];
        left -= e.cost;
        if (left + cost <= spec_.limit) return {false, spec_.window - (now - e.at)};
      }
      RELAYSIM_ASSERT(false, "an empty log admits any cost up to the limit");
      return {false, Duration::max()};
    }
    case LimiterAlgorithm::sliding_counter: {
      // r: how far into the current aligned window now is (at most w under the planted bug,
      // whose window can outlast its alignment).
      const auto r = std::min<std::uint64_t>(w, static_cast<std::uint64_t>(to_ns(now) - index_ * window_ns_));
      const u128 budget = u128{spec_.limit} * w;
      if (u128{prev_} * (w - r) + u128{cur_ + cost} * w <= budget) return {true, {}};
      // Otherwise wait for the previous window's weight to fall: the least r' with
      // prev * (w - r') + (cur + cost) * w <= budget is w - floor(room / prev).
      if (cur_ + cost <= spec_.limit && prev_ > 0) {
        const u128 room = u128{spec_.limit - cur_ - cost} * w;
        const u128 at = w - std::min<u128>(w, room / prev_);
        if (at < w) return {false, ns(at - r)};
      }
      // ...or for the next window, where this window's count is the previous one's.
      const u128 room = u128{spec_.limit - cost} * w;
      const u128 at = cur_ == 0 ? 0 : w - std::min<u128>(w, room / cur_);
      return {false, ns((w - r) + at)};
    }
    case LimiterAlgorithm::token_bucket: {
      const u128 need = u128{cost} * w;
      if (tokens_ >= need) return {true, {}};
      return {false, ns(ceil_div(need - tokens_, spec_.limit))};
    }
    case LimiterAlgorithm::gcra: {
      const u128 scaled_now = u128{static_cast<std::uint64_t>(to_ns(now))} * spec_.limit;
      std::uint64_t burst = spec_.effective_burst();
      if (planted(mutant::gcra_burst_off_by_one)) ++burst;  // redis-cell's max_burst taken as the burst
      const u128 new_tat = std::max(tat_, scaled_now) + u128{cost} * w;
      const u128 tolerance = u128{burst} * w;
      if (new_tat <= scaled_now + tolerance) return {true, {}};
      return {false, ns(ceil_div(new_tat - tolerance - scaled_now, spec_.limit))};
    }
  }
  return {false, Duration::max()};
}

void Limiter::record(Time now, std::uint32_t cost, std::uint64_t member) {
  const auto w = static_cast<std::uint64_t>(window_ns_);
  switch (spec_.algorithm) {
    case LimiterAlgorithm::sliding_log:
      if (size_ == log_.size()) {  // grow the ring, oldest first
        std::vector<LogEntry> bigger;
        bigger.reserve(std::max<std::size_t>(8, log_.size() * 2));
        for (std::size_t i = 0; i < size_; ++i) bigger.push_back(log_[(head_ + i) % log_.size()]);
        bigger.resize(bigger.capacity());
        log_ = std::move(bigger);
        head_ = 0;
      }
      log_[(head_ + size_) % log_.size()] = LogEntry{now, member, cost};
      if (member != 0) members_.insert(member, 1);
      ++size_;
      in_log_ += cost;
      return;
    case LimiterAlgorithm::sliding_counter:
      cur_ += cost;
      last_admit_ = now;
      return;
    case LimiterAlgorithm::token_bucket: {
      const u128 need = u128{cost} * w;
      tokens_ = tokens_ >= need ? tokens_ - need : 0;  // force() may ask for more than there is
      return;
    }
    case LimiterAlgorithm::gcra: {
      const u128 scaled_now = u128{static_cast<std::uint64_t>(to_ns(now))} * spec_.limit;
      tat_ = std::max(tat_, scaled_now) + u128{cost} * w;
      return;
    }
  }
}

LimitDecision Limiter::take(Time now, std::uint32_t cost, std::uint64_t member) {
  advance(now);
  if (member != 0 && spec_.algorithm == LimiterAlgorithm::sliding_log &&
      members_.find(member, [](std::uint64_t) { return true; }) != 0) {
    return {true, {}};  // a member already in the window was admitted: admit it again, count it once
  }
  const LimitDecision d = decide(now, cost);
  if (d.admitted) record(now, cost, member);
  return d;
}

LimitDecision Limiter::peek(Time now, std::uint32_t cost) {
  advance(now);
  return decide(now, cost);
}

void Limiter::force(Time now, std::uint32_t cost, std::uint64_t member) {
  RELAYSIM_ASSERT(cost >= 1, "a call costs at least one");
  advance(now);
  record(now, cost, member);
}

}  // namespace relaysim
