// M/M/c: the textbook queue (Poisson arrivals at rate λ, c servers, exponential service at rate μ
// each, first come first served), run on the simulation kernel.
//
// It is here for two reasons: a model whose answer is known (Erlang C) checks the kernel's
// statistics end to end, and the same model written in SimPy or as a bare priority-queue loop
// (bench/) is what relaysim's speed is compared against.
#pragma once

#include <cstdint>

namespace relaysim::sim {

struct MmcParams {
  double lambda = 0.9;             // arrivals per second
  double mu = 1.0;                 // services per second, per server
  std::uint32_t servers = 1;       // c
  std::uint64_t customers = 100'000;
  std::uint64_t seed = 1;
};

struct MmcResult {
  std::uint64_t customers = 0;     // served
  std::uint64_t events = 0;        // kernel events run
  double mean_wait_s = 0.0;        // time in the queue, before service starts
  double end_s = 0.0;              // virtual time of the last departure
};

// The random draws come from Rng::derive(seed, "mmc") in a fixed order (each arrival: its gap to
// the next arrival, then its service time), so any implementation that follows the same order
// — like bench's hand-written loop — gets the same waits to the last bit.
MmcResult run_mmc(const MmcParams& params);

// Erlang C: the expected wait in the queue of a stable M/M/c (λ < cμ), in seconds.
double erlang_c_wait(double lambda, double mu, std::uint32_t servers);

}  // namespace relaysim::sim
