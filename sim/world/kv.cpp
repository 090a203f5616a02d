#include "sim/world/kv.h"

#include "model/core/assert.h"

namespace relaysim::sim {

const Schema<KvSpec>& kv_schema() {
  static const Schema<KvSpec> schema = [] {
    Schema<KvSpec> s(Style::block, "The shared key-value store (Redis) on which cluster-wide limits are kept.");
    s.key("latency", &KvSpec::latency, latency_codec(), "round-trip latency of a call");
    s.key("outages", &KvSpec::outages, list_codec(map_codec(outage_schema()), "list of windows with a mode"),
          "when the store refuses calls (`error`) or swallows them (`timeout`)");
    s.key("restarts", &KvSpec::restarts, list_codec(map_codec(window_schema()), "list of windows"),
          "when the store restarts: it refuses calls for the window, then comes back with no data");
    s.key("lost_answers", &KvSpec::lost_answers, fraction_codec(),
          "share of calls that take effect but whose answer never comes (the caller times out)");
    return s;
  }();
  return schema;
}

SimKv::SimKv(const KvSpec& spec, Kernel& kernel, std::uint64_t seed)
    : spec_(spec), kernel_(kernel), latency_(spec.latency), rng_(Rng::derive(seed, "kv")) {}

void SimKv::install() {
  for (const Window& w : spec_.restarts) {
    kernel_.at(w.at, [this] {
      keys_.clear();
      ++restarts_;
      bus_.emit(KvRestarted{kernel_.now(), restarts_});
    });
  }
}

bool SimKv::refuses(Time t) const {
  for (const Window& w : spec_.restarts) {
    if (w.contains(t)) return true;
  }
  for (const Outage& o : spec_.outages) {
    if (o.mode == OutageMode::error && o.window.contains(t)) return true;
  }
  return false;
}

bool SimKv::swallows(Time t) const {
  for (const Outage& o : spec_.outages) {
    if (o.mode == OutageMode::timeout && o.window.contains(t)) return true;
  }
  return false;
}

void SimKv::limit(std::string_view key, const LimiterSpec& spec, LimitOp op, std::uint32_t cost,
                  std::uint64_t member, Duration timeout, LimitCallback done) {
  RELAYSIM_ASSERT(timeout > Duration::zero(), "a call has a timeout");
  RELAYSIM_ASSERT(static_cast<bool>(done), "a call has someone to answer");
  RELAYSIM_ASSERT(!key.empty(), "a limit is kept under a key");
  const Time now = kernel_.now();
  const Duration round_trip = latency_.sample(rng_);
  const Time arrives = now + round_trip / 2;
  const Time deadline = now + timeout;

  const std::uint32_t slot = calls_.acquire();
  Call& c = calls_[slot];
  c.done = std::move(done);
  c.answer = KvLimitAnswer{KvStatus::timeout, {}};
  c.answered = false;
  Time returns = deadline;  // unless an answer comes back in time
  if (refuses(arrives)) {
    if (now + round_trip <= deadline) {
      c.answer.status = KvStatus::unavailable;
      returns = now + round_trip;
    }
  } else if (!swallows(arrives)) {
    c.key.assign(key);
    c.spec = spec;
    c.op = op;
    c.cost = cost;
    c.member = member;
    c.answered = now + round_trip <= deadline && !rng_.chance(spec_.lost_answers);
    if (c.answered) returns = now + round_trip;
    kernel_.at(arrives, [this, slot] { apply(slot); });
  }
  // A call applied after its caller gave up still runs (at `arrives`); its slot is released by
  // whichever of the two events comes last.
  kernel_.at(std::max(returns, arrives), [this, slot] { finish(slot); });
  if (returns < arrives) {
    kernel_.at(returns, [this, slot] {
      Call& late = calls_[slot];
      if (late.done) std::exchange(late.done, {})(KvLimitAnswer{KvStatus::timeout, {}});
    });
  }
}

void SimKv::apply(std::uint32_t slot) {
  Call& c = calls_[slot];
  RELAYSIM_ASSERT(!c.key.empty(), "a call that reaches the store names its key");
  const Time now = kernel_.now();
  auto it = keys_.find(std::string_view(c.key));
  if (it == keys_.end() || !(it->second.spec == c.spec)) {
    if (it != keys_.end()) keys_.erase(it);
    it = keys_.emplace(c.key, KeyState{c.spec, Limiter(c.spec)}).first;
  }
  Limiter& limiter = it->second.limiter;
  LimitDecision d;
  switch (c.op) {
    case LimitOp::take: d = limiter.take(now, c.cost, c.member); break;
    case LimitOp::peek: d = limiter.peek(now, c.cost); break;
    case LimitOp::force:
      d = limiter.peek(now, c.cost);
      limiter.force(now, c.cost, c.member);
      break;
  }
  if (c.answered) c.answer = KvLimitAnswer{KvStatus::ok, d};
  bus_.emit(KvApplied{it->first, c.spec, c.op, c.cost, c.member, now, d, c.answered});
}

void SimKv::finish(std::uint32_t slot) {
  Call& c = calls_[slot];
  if (c.done) {
    const KvLimitAnswer answer = c.answer;  // the callback may call again and move the table
    std::exchange(c.done, {})(answer);
  }
  calls_.release(slot);
}

}  // namespace relaysim::sim
