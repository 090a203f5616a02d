// A reference-model property of the circuit breaker: random sequences of calls, outcomes (late
// ones from older generations included), abandoned probes and time, checked step by step against
// what the breaker promises (model/resilience/breaker.h).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <deque>
#include <optional>

#include "model/resilience/breaker.h"

namespace relaysim {
namespace {

using namespace std::chrono;

enum class Step { call, succeed, fail, abandon, wait };

RC_GTEST_PROP(BreakerModel, KeepsItsPromisesUnderAnyHistory, ()) {
  BreakerConfig c;
  c.window = seconds(*rc::gen::inRange(1, 20));
  c.min_calls = *rc::gen::inRange(1, 8);
  c.failure_rate = *rc::gen::inRange(1, 101) / 100.0;
  c.open_for = seconds(*rc::gen::inRange(1, 10));
  c.half_open_probes = *rc::gen::inRange(1, 4);
  const auto steps = *rc::gen::container<std::vector<Step>>(
      rc::gen::element(Step::call, Step::call, Step::succeed, Step::fail, Step::fail, Step::abandon, Step::wait));

  // The reference: what the breaker's documented states allow.
  BreakerState last = BreakerState::closed;
  Time opened_at{};
  std::uint32_t transitions = 0;
  CircuitBreaker b(c, [&](BreakerState from, BreakerState to, Time at) {
    RC_ASSERT(from == last);
    RC_ASSERT(to != from);
    // The only edges: closed->open, open->half_open, half_open->open, half_open->closed.
    RC_ASSERT((from == BreakerState::closed && to == BreakerState::open) ||
              (from == BreakerState::open && to == BreakerState::half_open) ||
              (from == BreakerState::half_open && to != BreakerState::half_open));
    if (to == BreakerState::half_open) RC_ASSERT(at - opened_at >= c.open_for);  // never early
    if (to == BreakerState::open) opened_at = at;
    last = to;
    ++transitions;
  });

  Time now = Time{} + seconds(1);
  std::deque<Permit> outstanding;  // admitted calls without a result yet, oldest first
  std::deque<Time> closed_results;  // results recorded while closed in the current closed period
  for (Step s : steps) {
    const BreakerState before = b.state();
    const std::uint64_t generation = b.generation();
    switch (s) {
      case Step::call: {
        const bool refuses = b.refuses(now);
        const std::optional<Time> open_until = b.open_until();
        if (open_until) RC_ASSERT(refuses == (now < *open_until));
        const Permit p = b.acquire(now);
        RC_ASSERT(refuses == !p.admitted);  // refuses() says what acquire() will do
        if (b.state() == BreakerState::open) RC_ASSERT(!p.admitted);  // open admits nothing
        if (b.state() == BreakerState::closed) RC_ASSERT(p.admitted);
        if (p.admitted) outstanding.push_back(p);
        RC_ASSERT(b.probes_in_flight() <= c.half_open_probes);
        break;
      }
      case Step::succeed:
      case Step::fail: {
        if (outstanding.empty()) break;
        const Permit p = outstanding.front();
        outstanding.pop_front();
        b.record(p, s == Step::succeed, now);
        if (p.generation != generation) {
          // A late result from an older generation changes nothing at all.
          RC_ASSERT(b.state() == before);
          RC_ASSERT(b.generation() == generation);
        }
        if (before == BreakerState::closed && p.generation == generation) {
          closed_results.push_back(now);
          // Below min_calls results in the window it never opens.
          while (!closed_results.empty() && closed_results.front() <= now - c.window) closed_results.pop_front();
          if (b.state() == BreakerState::open) RC_ASSERT(closed_results.size() >= c.min_calls);
        }
        if (before == BreakerState::half_open && p.generation == generation && s == Step::fail) {
          RC_ASSERT(b.state() == BreakerState::open);  // any probe failure reopens
        }
        break;
      }
      case Step::abandon: {
        if (outstanding.empty()) break;
        const std::uint32_t probes = b.probes_in_flight();
        const Permit p = outstanding.back();
        outstanding.pop_back();
        b.release(p);
        if (before == BreakerState::half_open && p.generation == generation) {
          RC_ASSERT(b.probes_in_flight() == probes - 1);  // a lost probe frees its slot
        }
        break;
      }
      case Step::wait:
        now += milliseconds(*rc::gen::inRange(1, 15'000));
        break;
    }
    if (b.state() != BreakerState::closed) closed_results.clear();
    RC_ASSERT(b.state() == last);
  }
  RC_TAG(transitions > 0 ? "changed state" : "stayed closed");
}

}  // namespace
}  // namespace relaysim
