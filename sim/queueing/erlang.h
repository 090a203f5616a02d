// Queueing formulas: what theory says a pipeline of c identical servers does, for the analytic
// side of `relaysim plan` and for validating the simulator against theory.
//
// M/M/c (Poisson arrivals at λ, exponential service at μ per server, c servers, first come first
// served): Erlang B by its recursion and Erlang C from it, so any number of servers stays finite;
// the wait's and the sojourn's tails in closed form. G/G/c by the Allen–Cunneen approximation:
// the M/M/c wait scaled by (ca² + cs²) / 2, the squared coefficients of variation of the gaps
// between arrivals and of the service times (exact for M/M/c, Kingman's formula for c = 1).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace relaysim::sim::queueing {

// Offered load a = λ/μ in Erlangs. Each needs c > 0 (and, beyond Erlang B, a < c: a stable queue).
double erlang_b(double a, std::uint32_t c);
double erlang_c(double a, std::uint32_t c);  // P(an arrival waits)

struct Station {
  double lambda = 0;     // arrivals per second
  double mean_s = 0;     // mean service time, seconds
  std::uint32_t c = 1;   // servers
  double ca2 = 1;        // arrivals' squared coefficient of variation (1: Poisson)
  double cs2 = 1;        // service's (1: exponential, 0: constant)
  // Arrivals in spells (an MMPP). ca2 is then the spells' asymptotic index of dispersion, right
  // for the load a queue carries but not for its waits: those depend on how long a spell lasts
  // against how fast the queue empties (short spells wait like ca2 says; spells much longer than
  // a busy period wait like the high and the low rate each alone, which can be an order of
  // magnitude less, or unstable). No closed form covers both, so theory keeps out of it.
  bool bursty = false;

  double offered() const { return lambda * mean_s; }   // a, Erlangs
  double utilisation() const { return offered() / c; }  // ρ
  bool stable() const { return offered() < c; }
  // P(wait > 0), the mean wait, and P(wait > t): Erlang C's, with the wait scaled by
  // (ca² + cs²) / 2 for G/G/c.
  double p_wait() const;
  double mean_wait_s() const;
  double wait_tail(double t) const;
  // The wait's q-quantile (0 < q < 1): 0 while q is within the share that never waits.
  double wait_quantile(double q) const;
  // P(sojourn > t), the sojourn being the wait plus an exponential service (exact for M/M/c),
  // and its q-quantile (0 < q < 1), found by bisection.
  double sojourn_tail(double t) const;
  double sojourn_quantile(double q) const;
  double mean_sojourn_s() const { return mean_wait_s() + mean_s; }
};

// A station as people name it, for the capacity check (sim/capacity.h): what it is ("dispatch"),
// what one of its servers is ("dispatch slots"), and the station at the load's peak. A rate limit
// of L calls per window W reads as one: L servers, each held for W by a call it admits.
struct StationLoad {
  std::string name;
  std::string servers;
  Station station;
};

// The least c, from the least stable one up to `most`, for which `meets` holds; nothing when none
// does. `meets` must hold for every c above one where it holds (more servers never hurt).
std::optional<std::uint32_t> least_servers(const Station& s, std::uint32_t most, const std::function<bool(const Station&)>& meets);

// Time for a backlog built during an outage of length T to drain at load ρ (fluid model:
// λT / (cμ − λ) = T ρ / (1 − ρ)).
double fluid_drain_s(double outage_s, double rho);

}  // namespace relaysim::sim::queueing
