#include "live/parallel.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "live/machine.h"
#include "model/core/assert.h"
#include "model/core/text.h"
#include "sim/run.h"

namespace relaysim::live {

unsigned runs_at_once(const std::vector<RunJob>& jobs, unsigned threads, double limit, bool quiet, const std::string& what) {
  RELAYSIM_ASSERT(threads >= 1, "runs go on at least one thread");
  if (limit <= 0) return threads;
  double largest = 0;
  sim::Footprint biggest;
  const sim::Scenario* last = nullptr;
  for (const RunJob& j : jobs) {
    if (j.scenario == last) continue;  // the replications of one point follow each other
    RELAYSIM_ASSERT(j.scenario != nullptr && j.scenario->system != nullptr, "a job names a scenario of a system");
    last = j.scenario;
    sim::Footprint f = j.scenario->system->footprint(*j.scenario, true);
    if (f.bytes() > largest) {
      largest = f.bytes();
      biggest = std::move(f);
    }
  }
  if (largest > limit) {
    throw std::runtime_error(what + ": one run would hold about " + human_bytes(largest) + ", more than the " + human_bytes(limit) +
                             " this process may use; " + biggest.largest().advice);
  }
  if (largest * threads <= limit) return threads;
  const auto fit = std::max(1u, static_cast<unsigned>(limit / largest));
  if (!quiet) {
    std::fprintf(stderr, "relaysim: %s: %u runs at once would hold about %s, more than the %s this process may use: running %u at once\n",
                 what.c_str(), threads, human_bytes(largest * threads).c_str(), human_bytes(limit).c_str(), fit);
  }
  return fit;
}

std::vector<RunOutcome> run_parallel(const std::vector<RunJob>& jobs, unsigned threads, bool quiet, const std::string& what,
                                     const std::vector<sim::MetricRef>& refs, const EachRun& each) {
  const StopSignals signals;
  std::vector<RunOutcome> out(jobs.size());
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex lock;  // guards `failure`, `working` and the calls of `each`
  std::condition_variable finished;  // a worker is done: the last one wakes the progress loop at once
  std::string failure;
  unsigned working = 0;
  const auto work = [&] {
    for (std::size_t k; !stop_requested() && (k = next.fetch_add(1)) < jobs.size();) {
      RELAYSIM_ASSERT(jobs[k].scenario != nullptr, "a job names a scenario");
      sim::RunOptions options;
      options.seed = jobs[k].seed;
      options.should_stop = [] { return stop_requested(); };
      try {
        const sim::RunResult r = sim::run_scenario(*jobs[k].scenario, std::move(options));
        if (r.ending == sim::Ending::interrupted) break;
        if (each) {
          const std::lock_guard guard(lock);
          each(k, r);
        }
        out[k].ran = true;
        out[k].pass = r.pass();
        out[k].ending = std::string(sim::to_string(r.ending));
        out[k].values = r.values;
        // A run whose world could not be built has no figures: n/a, every one.
        if (out[k].values.empty()) out[k].values.assign(r.system().metrics().size(), std::nan(""));
        for (const sim::MetricRef& m : refs) out[k].targets.push_back(r.metric(m));
      } catch (const std::exception& e) {
        const std::lock_guard guard(lock);
        if (failure.empty()) failure = what + " " + std::to_string(k) + " failed: " + e.what();
        next = jobs.size();
      }
      ++done;
    }
    const std::lock_guard guard(lock);
    --working;
    finished.notify_all();
  };
  const auto started = std::chrono::steady_clock::now();
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(std::max<std::size_t>(1, jobs.size()))));
  std::vector<std::thread> pool;
  working = threads;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  const bool tty = isatty(STDERR_FILENO) != 0;
  double last = 0;
  for (std::unique_lock guard(lock); working > 0;) {
    // Woken when the last worker is done, not a tick later: a sweep of short runs would
    // otherwise wait up to a tick for nothing.
    if (finished.wait_for(guard, std::chrono::milliseconds(50), [&] { return working == 0; })) break;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (quiet || wall - last < (tty ? 0.2 : 10.0)) continue;
    last = wall;
    const std::size_t d = done;
    // Until a run has finished there is nothing to estimate from.
    const std::string left = d == 0 ? std::string("estimating the time left")
                                    : fmt("about %.0fs left", wall * static_cast<double>(jobs.size() - d) / static_cast<double>(d));
    std::fprintf(stderr, tty ? "\r  %s: %zu/%zu runs  wall %.0fs  %s   " : "relaysim: %s: %zu/%zu runs  wall %.0fs  %s\n",
                 what.c_str(), d, jobs.size(), wall, left.c_str());
  }
  for (std::thread& t : pool) t.join();
  if (tty && !quiet && last > 0) std::fprintf(stderr, "\r%*s\r", 80, "");
  if (!failure.empty()) throw std::runtime_error(failure);
  return out;
}

}  // namespace relaysim::live
