#include "tests/property/limiter_properties.h"

#include <rapidcheck.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "model/resilience/limiters.h"
#include "model/resilience/shared_limiter.h"
#include "sim/kernel/kernel.h"
#include "sim/oracle/limit_replay.h"
#include "sim/oracle/limiter_reference.h"
#include "sim/world/kv.h"

namespace relaysim::limiter_props {
namespace {

using sim::ReferenceLimiter;
using sim::TimedCost;

struct Call {
  std::int64_t gap_us;   // since the previous call
  std::uint32_t cost;
  std::uint64_t member;  // 0: anonymous; from a small pool, so repeats happen
};

LimiterSpec any_spec(LimiterAlgorithm algorithm) {
  LimiterSpec s;
  s.algorithm = algorithm;
  s.limit = *rc::gen::inRange<std::uint32_t>(1, 9);
  s.window = std::chrono::milliseconds(*rc::gen::element<int>(1, 7, 100, 1000, 1500));
  s.burst = *rc::gen::inRange<std::uint32_t>(0, 10);
  return s;
}

LimiterSpec any_spec() { return any_spec(static_cast<LimiterAlgorithm>(*rc::gen::inRange(0, 4))); }

// Calls in bursts (a gap of 0 a third of the time) and at gaps up to two windows.
std::vector<Call> any_calls(const LimiterSpec& s) {
  const std::int64_t window_us = to_ns(s.window) / 1000;
  return *rc::gen::container<std::vector<Call>>(rc::gen::construct<Call>(
      rc::gen::weightedOneOf<std::int64_t>({{1, rc::gen::just<std::int64_t>(0)},
                                            {2, rc::gen::inRange<std::int64_t>(1, 2 * window_us + 2)}}),
      rc::gen::weightedOneOf<std::uint32_t>({{4, rc::gen::just<std::uint32_t>(1)},
                                             {1, rc::gen::inRange<std::uint32_t>(1, s.max_cost() + 2)}}),
      rc::gen::weightedOneOf<std::uint64_t>({{1, rc::gen::just<std::uint64_t>(0)},
                                             {2, rc::gen::inRange<std::uint64_t>(1, 12)}})));
}

}  // namespace

void matches_the_reference() {
  const LimiterSpec spec = any_spec();
  const auto calls = any_calls(spec);
  Limiter model(spec);
  ReferenceLimiter ref(spec);
  Time now = Time{} + std::chrono::seconds(5);
  for (const Call& c : calls) {
    now += std::chrono::microseconds(c.gap_us);
    const ReferenceLimiter::Verdict v = ref.judge(now, c.cost, c.member);
    const LimitDecision peeked = model.peek(now, c.cost);
    const LimitDecision d = model.take(now, c.cost, c.member);
    RC_ASSERT(d.admitted == v.admitted);
    if (!v.repeat) RC_ASSERT(peeked.admitted == d.admitted);
    if (d.admitted) {
      RC_ASSERT(d.retry_after == Duration::zero());
      if (!v.repeat) ref.record(now, c.cost, c.member);
      continue;
    }
    if (c.cost > spec.max_cost()) {
      RC_ASSERT(d.retry_after == Duration::max());
      continue;
    }
    RC_ASSERT(d.retry_after > Duration::zero());
    RC_ASSERT(!ref.judge(now + d.retry_after - Duration{1}, c.cost, c.member).admitted);
    RC_ASSERT(ref.judge(now + d.retry_after, c.cost, c.member).admitted);
  }
}

void replay_decides_as_the_reference() {
  const LimiterSpec spec = any_spec();
  const auto calls = any_calls(spec);
  // Some admissions are forced past the limit (what a store that checks, then sets, records) and
  // the limit is sometimes reset (a store that restarts empty): the replay must follow both.
  const auto forced = *rc::gen::container<std::vector<bool>>(calls.size(), rc::gen::weightedElement<bool>({{5, false}, {1, true}}));
  const auto resets = *rc::gen::container<std::vector<bool>>(calls.size(), rc::gen::weightedElement<bool>({{30, false}, {1, true}}));
  ReferenceLimiter ref(spec);
  sim::LimitReplay replay(spec);
  Time now = Time{} + std::chrono::seconds(5);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const Call& c = calls[i];
    now += std::chrono::microseconds(c.gap_us);
    if (resets[i]) {
      ref.reset();
      replay.reset();
    }
    const ReferenceLimiter::Verdict v = ref.judge(now, c.cost, c.member);
    const sim::LimitReplay::Verdict r = replay.judge(now, c.cost, c.member);
    RC_ASSERT(r.admitted == v.admitted);
    RC_ASSERT(r.repeat == v.repeat);
    if (!v.repeat && (v.admitted || forced[i])) {
      ref.record(now, c.cost, c.member);
      replay.record(now, c.cost, c.member);
    }
  }
}

void keeps_its_stated_bound() {
  const LimiterSpec spec = any_spec();
  const auto calls = any_calls(spec);
  Limiter model(spec);
  ReferenceLimiter ref(spec);  // only to tell a repeat, which is not counted again
  std::vector<TimedCost> admitted;
  Time now = Time{} + std::chrono::seconds(5);
  for (const Call& c : calls) {
    now += std::chrono::microseconds(c.gap_us);
    const bool repeat = ref.judge(now, c.cost, c.member).repeat;
    if (model.take(now, c.cost, c.member).admitted && !repeat) {
      ref.record(now, c.cost, c.member);
      admitted.push_back({now, c.cost});
    }
  }
  RC_ASSERT(sim::first_bound_violation(spec, admitted) == -1);
}

void gcra_decides_as_the_token_bucket() {
  const LimiterSpec gcra = any_spec(LimiterAlgorithm::gcra);
  LimiterSpec bucket = gcra;
  bucket.algorithm = LimiterAlgorithm::token_bucket;
  Limiter a(gcra);
  Limiter b(bucket);
  Time now = Time{} + std::chrono::seconds(5);
  for (const Call& c : any_calls(gcra)) {
    now += std::chrono::microseconds(c.gap_us);
    const LimitDecision x = a.take(now, c.cost);
    const LimitDecision y = b.take(now, c.cost);
    RC_ASSERT(x.admitted == y.admitted);
    RC_ASSERT(x.retry_after == y.retry_after);
  }
}

void shares_add_up_to_the_limit() {
  const LimiterSpec spec = any_spec();
  const auto n = *rc::gen::inRange<std::uint32_t>(1, 5);
  const LimiterSpec part = spec.share(n);
  RC_ASSERT(part.limit >= 1);
  // Each share's bound, summed, exceeds the whole's by at most the rounding up of each share.
  for (const Duration span : {Duration::zero(), spec.window / 3, spec.window, 5 * spec.window / 2}) {
    const std::uint64_t whole = spec.bound(span);
    const std::uint64_t parts = n * part.bound(span);
    const std::uint64_t rounding = n * (spec.bound(span) / spec.limit + 2);
    RC_ASSERT(parts <= whole + rounding);
  }
}

namespace {
// Records what the store admitted: admitted takes and every force.
class StoreAdmissions final : public SinkFor<sim::KvApplied> {
 public:
  void on(const sim::KvApplied& e) override {
    if (e.op == LimitOp::force || (e.op == LimitOp::take && e.decision.admitted)) admitted.push_back({e.at, e.cost});
  }
  std::vector<TimedCost> admitted;
};
}  // namespace

void pods_sharing_a_limit_keep_its_bound() {
  SharedLimitConfig config;
  config.spec = any_spec();
  config.pods = *rc::gen::inRange<std::uint32_t>(2, 5);
  const auto calls = *rc::gen::container<std::vector<std::pair<std::int64_t, std::uint32_t>>>(
      rc::gen::pair(rc::gen::weightedOneOf<std::int64_t>({{2, rc::gen::just<std::int64_t>(0)},
                                                          {1, rc::gen::inRange<std::int64_t>(1, 5000)}}),
                    rc::gen::inRange<std::uint32_t>(0, config.pods)));
  sim::KvSpec kv_spec;
  const auto ms = std::chrono::milliseconds(*rc::gen::inRange(1, 6));
  kv_spec.latency = sim::LatencySpec{ms, 2 * ms};
  sim::Kernel kernel;
  sim::SimKv kv(kv_spec, kernel, *rc::gen::arbitrary<std::uint32_t>());
  StoreAdmissions store;
  kv.bus().attach(store);
  std::vector<std::unique_ptr<SharedLimiter>> pods;
  for (std::uint32_t p = 0; p < config.pods; ++p) pods.push_back(std::make_unique<SharedLimiter>("k", config, kv, kernel));
  Time at = Time{} + std::chrono::seconds(5);
  std::uint64_t member = 0;
  for (const auto& [gap_us, pod] : calls) {
    at += std::chrono::microseconds(gap_us);
    kernel.at(at, [&pods, p = pod, m = ++member] { pods[p]->take(1, m, [](const SharedDecision&) {}); });
  }
  kernel.run_until(at + std::chrono::seconds(1));
  RC_ASSERT(sim::first_bound_violation(config.spec, store.admitted) == -1);
}

}  // namespace relaysim::limiter_props
