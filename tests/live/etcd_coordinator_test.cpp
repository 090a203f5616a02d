// EtcdCoordinator, the Coordinator port on a real etcd: one holder at a time, a larger fencing
// token for every term, a renewal under the same token, a lease given back or run out free for
// the next holder, no grant while etcd is away. And its twin check: one trace of asks, renewals,
// releases and waits, run through the simulator's lease service (sim/world/coordinator.h) and
// through etcd, gives the same grants and refusals, and tokens in the same order.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "live/clock.h"
#include "live/etcd_coordinator.h"
#include "sim/kernel/kernel.h"
#include "sim/world/coordinator.h"
#include "sim/world/process.h"
#include "tests/live/etcd_server.h"
#include "tests/live/run_loop.h"

namespace relaysim::live {
namespace {

using namespace std::chrono_literals;
using testing_etcd::EtcdServer;

constexpr Duration kTtl = 2s;  // etcd's leases are whole seconds, and not much shorter than this

class EtcdLease : public ::testing::Test {
 protected:
  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);  // as relaysim's main does
    std::string problem;
    ASSERT_TRUE(etcd.start(problem)) << problem;
    caller.emplace(io, AddressPolicy{true, false, false}, std::string(), Duration::zero());
    coordinator.emplace(*caller, clock, EtcdOptions{etcd.endpoint(), "test/", 2s});
  }
  void TearDown() override {
    coordinator.reset();
    caller.reset();
  }

  void wait(Duration d) { testing_loop::run_for(io, d); }
  // Asks and waits for the answer.
  LeaseGrant acquire(std::uint64_t holder, std::string_view name = "shard-0") {
    const auto answer = std::make_shared<std::optional<LeaseGrant>>();
    coordinator->acquire(name, holder, kTtl, [answer](const LeaseGrant& g) {
      EXPECT_FALSE(*answer) << "answered twice";
      *answer = g;
    });
    EXPECT_FALSE(*answer) << "answered inside the call";
    // A bound on how long a broken test may hang, not a timing check.
    for (int turns = 0; !*answer && turns < 200; ++turns) wait(50ms);
    EXPECT_TRUE(*answer) << "no answer";
    return answer->value_or(LeaseGrant{});
  }

  boost::asio::io_context io;
  LiveClock clock;
  EtcdServer etcd;
  std::optional<HttpCaller> caller;
  std::optional<EtcdCoordinator> coordinator;
};

TEST_F(EtcdLease, OneHolderAtATimeAndEveryTermALargerToken) {
  const LeaseGrant first = acquire(1);
  ASSERT_TRUE(first.granted);
  EXPECT_GT(first.token, 0u);
  EXPECT_FALSE(acquire(2).granted) << "the name is held";
  const LeaseGrant renewed = acquire(1);
  EXPECT_TRUE(renewed.granted);
  EXPECT_EQ(renewed.token, first.token) << "a renewal keeps its term";
  const LeaseGrant other = acquire(2, "shard-1");
  EXPECT_TRUE(other.granted) << "another name is another lease";
  coordinator->release("shard-0", 1);
  wait(200ms);
  const LeaseGrant next = acquire(2);
  ASSERT_TRUE(next.granted) << "a lease given back is free at once";
  EXPECT_GT(next.token, first.token);
  EXPECT_FALSE(acquire(1).granted);
  EXPECT_EQ(coordinator->failures(), 0u);
}

TEST_F(EtcdLease, RefusesWhileEtcdIsAwayAndGrantsWhenItIsBack) {
  const LeaseGrant first = acquire(1);
  ASSERT_TRUE(first.granted);
  etcd.kill();
  EXPECT_FALSE(acquire(1).granted) << "no renewal without etcd";
  EXPECT_FALSE(acquire(2).granted);
  EXPECT_GT(coordinator->failures(), 0u);
  std::string problem;
  ASSERT_TRUE(etcd.start(problem)) << problem;
  // Holder 1's lease outlived the restart (etcd keeps leases on disk) or ran out meanwhile: either
  // way holder 1 holds the name again, under its old token or a larger one, and holder 2 does not.
  const LeaseGrant back = acquire(1);
  ASSERT_TRUE(back.granted);
  EXPECT_GE(back.token, first.token);
  EXPECT_FALSE(acquire(2).granted);
}

TEST_F(EtcdLease, AStalledEtcdIsAnsweredAtTheCallsDeadline) {
  ASSERT_TRUE(acquire(1).granted);
  etcd.pause();
  EXPECT_FALSE(acquire(1).granted) << "a renewal etcd does not answer is not a renewal";
  etcd.resume();
}

// One step of the twin trace: at `at` from its start, `holder` asks for the lease (or gives it back).
struct Step {
  Duration at;
  std::uint64_t holder;
  bool release = false;
};

// A grant as the twin compares it: refused (or a release), or granted under the n-th distinct
// token (in order).
std::vector<int> ranks(const std::vector<LeaseGrant>& grants) {
  std::map<std::uint64_t, int> order;
  for (const LeaseGrant& g : grants) {
    if (g.granted) order[g.token] = 0;
  }
  int n = 0;
  for (auto& [token, rank] : order) rank = ++n;
  std::vector<int> out;
  for (const LeaseGrant& g : grants) out.push_back(g.granted ? order[g.token] : 0);
  return out;
}

TEST_F(EtcdLease, MakesTheSimulatorsGrantsCallForCall) {
  // Holder 1 takes the lease and renews it; 2 is refused meanwhile. 1 gives it back and 2 takes
  // it; 2 lets it run out (at 4.8 s), and 1 takes it afresh; then 1 lets its own run out (at
  // 8.8 s) and asks again: a new term, not a renewal. Asks keep a second away from every expiry,
  // for etcd notices an expiry within its own round of checks.
  const std::vector<Step> trace = {{0ms, 1},     {300ms, 2},   {1000ms, 1},  {2500ms, 2},
                                   {2600ms, 1, true},          {2800ms, 2},  {3200ms, 1},
                                   {6800ms, 1},  {7100ms, 2},  {10800ms, 1}};
  // The simulator's lease service, answering in a millisecond.
  std::vector<LeaseGrant> simulated(trace.size());
  {
    sim::Kernel kernel;
    sim::CoordinatorSpec spec;
    spec.latency.shape = sim::LatencyShape::constant;
    spec.latency.mean = 1ms;
    sim::SimCoordinator service(spec, kernel, 1);
    sim::Process process(kernel, 0);
    for (std::size_t i = 0; i < trace.size(); ++i) {
      kernel.at(Time{} + trace[i].at, [&, i] {
        if (trace[i].release) {
          service.release("shard-0", trace[i].holder);
          return;
        }
        service.acquire(process, "shard-0", trace[i].holder, kTtl, [&, i](const LeaseGrant& g) { simulated[i] = g; });
      });
    }
    kernel.run_until(Time{} + 20s);
  }
  // etcd, on the same trace in real time.
  std::vector<LeaseGrant> real(trace.size());
  std::vector<bool> answered(trace.size(), false);
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < trace.size(); ++i) {
    wait(trace[i].at - (std::chrono::steady_clock::now() - start));
    if (trace[i].release) {
      coordinator->release("shard-0", trace[i].holder);
      answered[i] = true;
      continue;
    }
    coordinator->acquire("shard-0", trace[i].holder, kTtl, [&, i](const LeaseGrant& g) {
      real[i] = g;
      answered[i] = true;
    });
  }
  for (int turns = 0; turns < 200 && std::find(answered.begin(), answered.end(), false) != answered.end(); ++turns) {
    wait(50ms);
  }
  ASSERT_EQ(std::find(answered.begin(), answered.end(), false), answered.end()) << "an ask etcd never answered";
  EXPECT_EQ(ranks(real), ranks(simulated)) << "0: refused; n: granted under the n-th token";
  EXPECT_EQ(ranks(simulated), (std::vector<int>{1, 0, 1, 0, 0, 2, 0, 3, 0, 4})) << "the trace is what it says";
  EXPECT_EQ(coordinator->failures(), 0u);
}

}  // namespace
}  // namespace relaysim::live
