#include "sim/queueing/mmc.h"

#include <cmath>
#include <deque>

#include "model/core/assert.h"
#include "model/core/random.h"
#include "sim/kernel/kernel.h"
#include "sim/queueing/erlang.h"

namespace relaysim::sim {

namespace {

Duration seconds_to_duration(double s) { return Duration{static_cast<std::int64_t>(std::llround(s * 1e9))}; }

class Mmc {
 public:
  explicit Mmc(const MmcParams& p) : p_(p), rng_(Rng::derive(p.seed, "mmc")), free_(p.servers) {}

  MmcResult run() {
    kernel_.at(Time{}, [this] { arrive(); });
    while (kernel_.step()) {
    }
    RELAYSIM_ASSERT(queue_.empty() && served_ == arrived_, "every customer who came was served");
    RELAYSIM_ASSERT(free_ == p_.servers, "every server is free once the queue is done");
    MmcResult r;
    r.customers = served_;
    r.events = kernel_.events_run();
    r.mean_wait_s = served_ == 0 ? 0.0 : total_wait_s_ / static_cast<double>(served_);
    r.end_s = to_seconds(kernel_.now());
    return r;
  }

 private:
  void arrive() {
    const Duration gap = seconds_to_duration(rng_.exponential(1.0 / p_.lambda));
    const Duration service = seconds_to_duration(rng_.exponential(1.0 / p_.mu));
    if (++arrived_ < p_.customers) kernel_.after(gap, [this] { arrive(); });
    if (free_ > 0) {
      --free_;
      start(service);
    } else {
      queue_.push_back({kernel_.now(), service});
    }
  }
  void start(Duration service) {
    ++served_;
    kernel_.after(service, [this] { depart(); });
  }
  void depart() {
    if (queue_.empty()) {
      ++free_;
      return;
    }
    const Waiting w = queue_.front();
    queue_.pop_front();
    total_wait_s_ += to_seconds(kernel_.now() - w.arrived);
    start(w.service);
  }

  struct Waiting {
    Time arrived;
    Duration service;
  };
  MmcParams p_;
  Rng rng_;
  Kernel kernel_;
  std::uint32_t free_;
  std::uint64_t arrived_ = 0;
  std::uint64_t served_ = 0;
  double total_wait_s_ = 0;  // seconds: summed nanoseconds would pass 2^63 in long queues
  std::deque<Waiting> queue_;
};

}  // namespace

MmcResult run_mmc(const MmcParams& params) {
  RELAYSIM_ASSERT(params.lambda > 0 && params.mu > 0 && params.servers > 0, "M/M/c needs positive rates and servers");
  return Mmc(params).run();
}

double erlang_c_wait(double lambda, double mu, std::uint32_t servers) {
  RELAYSIM_ASSERT(mu > 0, "a server serves at some rate");
  RELAYSIM_ASSERT(lambda < servers * mu, "Erlang C needs a stable queue (lambda < servers * mu)");
  return queueing::Station{lambda, 1 / mu, servers}.mean_wait_s();
}

}  // namespace relaysim::sim
