// The M/M/c of sim/queueing/mmc.h written the way one would without a simulator: a bare
// std::priority_queue of (time, sequence, kind) and a std::deque for the waiting line.
//
// It draws the same random numbers in the same order and breaks ties the same way as the kernel
// version, so both compute the same waits to the last bit (tests/mmc_test.cpp checks that): the
// benchmark compares the same work, done by a general kernel and by a loop that knows its model.
#pragma once

#include <cmath>
#include <cstdint>
#include <deque>
#include <queue>
#include <vector>

#include "model/core/random.h"
#include "sim/queueing/mmc.h"

namespace relaysim::bench {

inline sim::MmcResult run_mmc_reference(const sim::MmcParams& p) {
  enum Kind : std::uint8_t { arrival, departure };
  struct Event {
    std::int64_t t;
    std::uint64_t seq;
    Kind kind;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  struct Waiting {
    std::int64_t arrived;
    std::int64_t service;
  };
  auto ns = [](double s) { return static_cast<std::int64_t>(std::llround(s * 1e9)); };
  Rng rng = Rng::derive(p.seed, "mmc");
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::deque<Waiting> queue;
  std::uint64_t seq = 0, arrived = 0, served = 0, run = 0;
  std::uint32_t free = p.servers;
  std::int64_t now = 0;
  double total_wait_s = 0;  // seconds, as the kernel's model sums them
  events.push({0, seq++, arrival});
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    now = e.t;
    ++run;
    if (e.kind == arrival) {
      const std::int64_t gap = ns(rng.exponential(1.0 / p.lambda));
      const std::int64_t service = ns(rng.exponential(1.0 / p.mu));
      if (++arrived < p.customers) events.push({now + gap, seq++, arrival});
      if (free > 0) {
        --free;
        ++served;
        events.push({now + service, seq++, departure});
      } else {
        queue.push_back({now, service});
      }
    } else if (queue.empty()) {
      ++free;
    } else {
      const Waiting w = queue.front();
      queue.pop_front();
      total_wait_s += static_cast<double>(now - w.arrived) * 1e-9;
      ++served;
      events.push({now + w.service, seq++, departure});
    }
  }
  sim::MmcResult r;
  r.customers = served;
  r.events = run;
  r.mean_wait_s = served == 0 ? 0.0 : total_wait_s / static_cast<double>(served);
  r.end_s = static_cast<double>(now) * 1e-9;
  return r;
}

}  // namespace relaysim::bench
