#include "sim/queueing/erlang.h"

#include <cmath>

#include "model/core/assert.h"

namespace relaysim::sim::queueing {

double erlang_b(double a, std::uint32_t c) {
  RELAYSIM_ASSERT(c > 0 && a >= 0, "Erlang B needs servers and a load");
  // B(k) = a B(k-1) / (k + a B(k-1)): the textbook sums of a^k / k! overflow past a few hundred.
  double b = 1.0;
  for (std::uint32_t k = 1; k <= c; ++k) b = a * b / (k + a * b);
  return b;
}

double erlang_c(double a, std::uint32_t c) {
  RELAYSIM_ASSERT(a < c, "Erlang C needs a stable queue (a < c)");
  const double b = erlang_b(a, c);
  return c * b / (c - a * (1.0 - b));
}

namespace {
// The rate at which the exponential part of the wait decays: (cμ − λ), slowed for G/G/c.
double decay(const Station& s) { return (s.c / s.mean_s - s.lambda) / ((s.ca2 + s.cs2) / 2); }
}  // namespace

double Station::p_wait() const { return erlang_c(offered(), c); }

double Station::mean_wait_s() const { return p_wait() / decay(*this); }

double Station::wait_tail(double t) const { return t < 0 ? 1.0 : p_wait() * std::exp(-decay(*this) * t); }

double Station::wait_quantile(double q) const {
  RELAYSIM_ASSERT(q > 0 && q < 1 && stable(), "a quantile of a stable queue");
  const double pw = p_wait();
  // P(wait > t) = C e^(−θt) falls to 1 − q at t = ln(C / (1 − q)) / θ, if C is above 1 − q at all.
  return pw <= 1 - q ? 0.0 : std::log(pw / (1 - q)) / decay(*this);
}

double Station::sojourn_tail(double t) const {
  if (t <= 0) return 1.0;
  const double mu = 1 / mean_s, theta = decay(*this), pw = p_wait();
  // Wait: 0 with probability 1 − C, else exponential(θ); plus an independent exponential(μ).
  const double both = std::abs(mu - theta) < 1e-12 * mu ? (1 + mu * t) * std::exp(-mu * t)
                                                         : (mu * std::exp(-theta * t) - theta * std::exp(-mu * t)) / (mu - theta);
  return (1 - pw) * std::exp(-mu * t) + pw * both;
}

double Station::sojourn_quantile(double q) const {
  RELAYSIM_ASSERT(q > 0 && q < 1 && stable(), "a quantile of a stable queue");
  double lo = 0, hi = mean_s;
  while (sojourn_tail(hi) > 1 - q) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (sojourn_tail(mid) > 1 - q ? lo : hi) = mid;
  }
  return hi;
}

std::optional<std::uint32_t> least_servers(const Station& s, std::uint32_t most, const std::function<bool(const Station&)>& meets) {
  RELAYSIM_ASSERT(static_cast<bool>(meets), "a test of a station");
  Station probe = s;
  probe.c = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::floor(s.offered())) + 1);
  for (; probe.c <= most; ++probe.c) {
    if (meets(probe)) return probe.c;
  }
  return std::nullopt;
}

double fluid_drain_s(double outage_s, double rho) {
  RELAYSIM_ASSERT(rho >= 0 && rho < 1, "a backlog drains only below full load");
  RELAYSIM_ASSERT(outage_s >= 0, "an outage lasts no negative time");
  return outage_s * rho / (1 - rho);
}

}  // namespace relaysim::sim::queueing
