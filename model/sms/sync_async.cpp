#include "model/sms/sync_async.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/sms/mutants.h"

namespace relaysim::sms {

SyncAsyncController::SyncAsyncController(const SyncAsyncConfig& config)
    : config_(config), errors_(config.error_rate.window) {
  RELAYSIM_ASSERT(config.probe_every >= 1 && config.latency.window > Duration::zero(), "a valid configuration");
}

void SyncAsyncController::add_latency(Time now, Duration latency) {
  const double ns = static_cast<double>(to_ns(latency));
  // Seconds, for the growth rule.
  const std::int64_t s = to_ns(now) / 1'000'000'000;
  if (s != seconds_[0].index) {
    if (s == seconds_[0].index + 1) {
      seconds_ = {Second{s, 0, 0}, seconds_[0], seconds_[1]};
    } else if (s == seconds_[0].index + 2) {
      seconds_ = {Second{s, 0, 0}, Second{s - 1, 0, 0}, seconds_[0]};
    } else {
      seconds_ = {Second{s, 0, 0}, Second{}, Second{}};
    }
  }
  ++seconds_[0].calls;
  seconds_[0].sum_ns += ns;
  // Tenths of the latency window, for its mean.
  const std::int64_t tenth = std::max<std::int64_t>(1, to_ns(config_.latency.window) / 10);
  const std::int64_t b = to_ns(now) / tenth;
  Second& bucket = latency_buckets_[static_cast<std::size_t>(b) % latency_buckets_.size()];
  if (bucket.index != b) bucket = Second{b, 0, 0};
  ++bucket.calls;
  bucket.sum_ns += ns;
}

AsyncRule SyncAsyncController::rule_fired(Time now) const {
  const auto& lat = config_.latency;
  if (lat.over > Duration::zero()) {
    if (lat.consecutive > 0) {
      const std::uint32_t needed = lat.consecutive + (planted(mutant::async_enters_one_late) ? 1U : 0U);
      if (slow_in_a_row_ >= needed) return AsyncRule::latency_consecutive;
    } else {
      const std::int64_t tenth = std::max<std::int64_t>(1, to_ns(lat.window) / 10);
      const std::int64_t newest = to_ns(now) / tenth;
      std::uint32_t calls = 0;
      double sum = 0;
      for (const Second& b : latency_buckets_) {
        if (b.index >= 0 && b.index > newest - 10) {
          calls += b.calls;
          sum += b.sum_ns;
        }
      }
      if (calls >= lat.min_calls && calls > 0 && sum / calls > static_cast<double>(to_ns(lat.over))) {
        return AsyncRule::latency_window;
      }
    }
  }
  const auto& g = config_.growth;
  if (g.percent > 0) {
    const Second& last = seconds_[1];
    const Second& before = seconds_[2];
    if (last.index >= 0 && before.index == last.index - 1 && last.calls >= g.min_calls && before.calls >= g.min_calls &&
        last.sum_ns / last.calls > before.sum_ns / before.calls * (1.0 + g.percent / 100.0)) {
      return AsyncRule::growth;
    }
  }
  const auto& e = config_.error_rate;
  if (e.over > 0) {
    const WindowTotals t = errors_.totals(now);
    if (t.calls >= e.min_calls && t.failure_rate() > e.over) return AsyncRule::error_rate;
  }
  return AsyncRule::none;
}

void SyncAsyncController::enter(Time now, AsyncRule rule) {
  RELAYSIM_ASSERT(!async_ && rule != AsyncRule::none, "async mode is entered from sync mode, by a rule");
  async_ = true;
  entered_at_ = now;
  entered_by_ = rule;
  sends_ = 0;
  good_probes_ = 0;
}

void SyncAsyncController::leave() {
  RELAYSIM_ASSERT(async_, "only async mode is left");
  async_ = false;
  // Judged afresh: what made it enter must be seen again.
  slow_in_a_row_ = 0;
  seconds_ = {};
  latency_buckets_ = {};
  errors_.clear();
}

SendPath SyncAsyncController::route(Time now, ModeChange& change) {
  change = {};
  if (!async_) return SendPath::sync;
  change = expire(now);
  if (change) return SendPath::sync;
  if (config_.exit == SyncAsyncConfig::Exit::probe && ++sends_ % config_.probe_every == 0) return SendPath::probe;
  return SendPath::async;
}

ModeChange SyncAsyncController::expire(Time now) {
  if (!async_ || config_.exit != SyncAsyncConfig::Exit::after || now < entered_at_ + config_.after ||
      planted(mutant::async_never_exits)) {
    return {};
  }
  leave();
  return {false, true, AsyncRule::timer};
}

ModeChange SyncAsyncController::observe(Time now, Duration latency, bool failed, SendPath path) {
  RELAYSIM_ASSERT(latency >= Duration::zero(), "a submit's latency is not negative");
  if (!config_.enabled) return {};
  if (path == SendPath::probe) {
    if (!async_) return {};  // a probe that finished after the mode was left
    const bool good = !failed && (config_.latency.over <= Duration::zero() || latency <= config_.latency.over);
    good_probes_ = good ? good_probes_ + 1 : 0;
    if (good_probes_ >= config_.min_probes && !planted(mutant::async_never_exits)) {
      leave();
      return {false, true, AsyncRule::probes};
    }
    return {};
  }
  if (path != SendPath::sync || async_) return {};
  slow_in_a_row_ = latency > config_.latency.over ? slow_in_a_row_ + 1 : 0;
  add_latency(now, latency);
  errors_.add(now, failed);
  const AsyncRule rule = rule_fired(now);
  if (rule == AsyncRule::none) return {};
  enter(now, rule);
  return {true, false, rule};
}

}  // namespace relaysim::sms
