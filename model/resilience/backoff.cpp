#include "model/resilience/backoff.h"

#include <algorithm>
#include <cmath>

#include "model/core/assert.h"

namespace relaysim {

Duration base_delay(const BackoffPolicy& p, std::uint32_t n) {
  RELAYSIM_ASSERT(n >= 1, "retries are numbered from 1");
  if (p.kind == BackoffKind::fixed) return p.initial;
  // multiplier^(n-1) overflows quickly; the cap makes anything past it irrelevant.
  const double factor = std::pow(p.multiplier, static_cast<double>(std::min<std::uint32_t>(n - 1, 200)));
  return std::min(scale(p.initial, factor), p.max_interval);
}

static Duration uniform_between(Duration lo, Duration hi, Rng& rng) {
  if (hi <= lo) return lo;
  const auto span = static_cast<std::uint64_t>(to_ns(hi) - to_ns(lo));
  return lo + Duration{static_cast<std::int64_t>(rng.below(span + 1))};
}

Duration next_delay(const BackoffPolicy& p, std::uint32_t n, Duration previous, Rng& rng) {
  const Duration base = base_delay(p, n);
  Duration d{};
  switch (p.jitter) {
    case Jitter::none: d = base; break;
    case Jitter::full: d = uniform_between(Duration::zero(), base, rng); break;
    case Jitter::equal: d = uniform_between(base / 2, base, rng); break;
    case Jitter::decorrelated: {
      const Duration prev = previous > Duration::zero() ? previous : p.initial;
      d = std::min(uniform_between(p.initial, scale(prev, 3.0), rng), p.max_interval);
      break;
    }
  }
  RELAYSIM_ASSERT(d >= min_delay(p, n) && d <= max_delay(p, n, previous), "a delay outside the policy's own bounds");
  return d;
}

Duration min_delay(const BackoffPolicy& p, std::uint32_t n) {
  RELAYSIM_ASSERT(n >= 1, "retries are numbered from 1");
  switch (p.jitter) {
    case Jitter::none: return base_delay(p, n);
    case Jitter::full: return Duration::zero();
    case Jitter::equal: return base_delay(p, n) / 2;
    case Jitter::decorrelated: return std::min(p.initial, p.max_interval);
  }
  return Duration::zero();
}

Duration max_delay(const BackoffPolicy& p, std::uint32_t n, Duration previous) {
  RELAYSIM_ASSERT(n >= 1, "retries are numbered from 1");
  if (p.jitter != Jitter::decorrelated) return base_delay(p, n);
  const Duration prev = previous > Duration::zero() ? previous : p.initial;
  return std::min(std::max(p.initial, scale(prev, 3.0)), p.max_interval);
}

Duration unrecorded_previous(const BackoffPolicy& p, std::uint32_t n) {
  RELAYSIM_ASSERT(n >= 1, "retries are numbered from 1");
  return n > 1 ? base_delay(p, n - 1) : p.initial;
}

double mean_retries_within(const BackoffPolicy& p, Duration window) {
  const double share = p.jitter == Jitter::full ? 0.5 : p.jitter == Jitter::equal ? 0.75 : 1.0;
  const double total = to_seconds(window);
  double spent = 0;
  double retries = 0;
  for (std::uint32_t n = 1;; ++n) {
    const double delay = share * to_seconds(base_delay(p, n));
    if (delay <= 0) return retries;
    // Once the delay stops growing, the rest of the window is that delay over and over.
    if (p.kind == BackoffKind::fixed || n > 1000 || base_delay(p, n) == base_delay(p, n + 1)) {
      return retries + std::max(0.0, std::floor((total - spent) / delay));
    }
    if (spent + delay > total) return retries;
    spent += delay;
    retries += 1;
  }
}

void check_backoff(const BackoffPolicy& b, const std::string& key, std::vector<ConfigError>& out) {
  if (b.initial < kMinRetryInterval) {
    out.push_back({key + ".initial", "must be at least " +
                                         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(kMinRetryInterval).count()) + "ms" +
                                         " (a shorter first delay retries in a busy loop)"});
  }
  if (b.multiplier < 1.0) out.push_back({key + ".multiplier", "must be at least 1 (a backoff never shrinks)"});
  if (b.max_interval < b.initial) {
    out.push_back({key + ".max_interval", "must not be shorter than initial (" + format_duration(b.initial) + ")"});
  }
}

}  // namespace relaysim
