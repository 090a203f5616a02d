#include "sim/outbox/downstream.h"

#include "model/core/assert.h"

namespace relaysim::sim::outbox {

using relaysim::outbox::Applied;
using relaysim::outbox::Effect;
using relaysim::outbox::Handled;

const Schema<DownstreamSpec>& downstream_schema() {
  static const Schema<DownstreamSpec> schema = [] {
    Schema<DownstreamSpec> s(Style::block,
                             "The service a consumer's handling changes: it applies each message's effect once, "
                             "through the inbox in its own database.");
    s.key("latency", &DownstreamSpec::latency, latency_codec(), "round-trip latency of a handling");
    s.key("error_rate", &DownstreamSpec::error_rate, fraction_codec(),
          "share refused before anything is applied (retried after the type's backoff)");
    s.key("rejection_rate", &DownstreamSpec::rejection_rate, fraction_codec(),
          "share refused for good (the message fails as `rejected`)");
    s.key("lost_answers", &DownstreamSpec::lost_answers, fraction_codec(),
          "share applied whose answer never arrives (the consumer times out and retries: the inbox must dedup)");
    s.key("deaths", &DownstreamSpec::deaths, fraction_codec(),
          "share whose handler dies after writing the effect and before it finishes (no answer)");
    s.key("outages", &DownstreamSpec::outages, list_codec(map_codec(outage_schema()), "list of windows with a mode"),
          "`error`: every handling refused at once; `timeout`: swallowed", opt::shown("none"));
    s.key("slowdowns", &DownstreamSpec::slowdowns, list_codec(map_codec(slowdown_schema()), "list of windows with a factor"),
          "windows when its latency is multiplied", opt::shown("none"));
    s.check([](const Reader& r, const Map& m, DownstreamSpec& d) {
      // One draw decides a handling's fate: shares past 100% would silently shrink the later ones.
      if (d.error_rate + d.rejection_rate + d.deaths + d.lost_answers > 1.0) {
        r.fail(m.node(), m.path(), "error_rate + rejection_rate + deaths + lost_answers must not exceed 100%");
      }
    });
    return s;
  }();
  return schema;
}

SimDownstream::SimDownstream(const DownstreamSpec& spec, Kernel& kernel, std::uint64_t seed,
                             relaysim::outbox::EffectStore& store, WorldEvents& events)
    : spec_(spec), kernel_(kernel), latency_(spec.latency), rng_(Rng::derive(seed, "downstream")), store_(store),
      events_(events) {}

void SimDownstream::handle(Process& caller, std::uint32_t pod, const Record& record, Duration timeout,
                           relaysim::outbox::Downstream::HandleCallback done) {
  RELAYSIM_ASSERT(timeout > Duration::zero() && static_cast<bool>(done), "a handling has a timeout and someone to answer");
  const Time now = kernel_.now();
  const Duration round_trip = scale(latency_.sample(rng_), slowdown_at(spec_.slowdowns, now));
  const Time arrives = now + round_trip / 2;
  const Time back = now + round_trip;
  const Time deadline = now + timeout;
  Fate fate = Fate::apply;
  for (const Outage& o : spec_.outages) {
    if (o.window.contains(arrives)) fate = o.mode == OutageMode::error ? Fate::fail : Fate::swallow;
  }
  if (fate == Fate::apply) {
    const double u = rng_.uniform01();
    double edge = spec_.error_rate;
    if (u < edge) {
      fate = Fate::fail;
    } else if (u < (edge += spec_.rejection_rate)) {
      fate = Fate::reject;
    } else if (u < (edge += spec_.deaths)) {
      fate = Fate::die;
    } else if (u < (edge += spec_.lost_answers)) {
      fate = Fate::lose_answer;
    }
  }
  Handled answer = Handled::timeout;
  Time answer_at = deadline;
  if (back <= deadline) {
    switch (fate) {
      case Fate::apply: answer = Handled::done; answer_at = back; break;
      case Fate::fail: answer = Handled::failed; answer_at = back; break;
      case Fate::reject: answer = Handled::rejected; answer_at = back; break;
      default: break;
    }
  }
  if (fate == Fate::apply || fate == Fate::lose_answer || fate == Fate::die) {
    kernel_.at(arrives, [this, record, pod, fate] { arrive(record, pod, fate); });
  }
  RELAYSIM_ASSERT(answer_at <= deadline, "an answer comes by the timeout");
  caller.at(answer_at, [answer, done = std::move(done)]() mutable { done(answer); });
}

void SimDownstream::arrive(const Record& record, std::uint32_t pod, Fate fate) {
  RELAYSIM_ASSERT(fate == Fate::apply || fate == Fate::lose_answer || fate == Fate::die,
                  "only a handling that reaches the downstream arrives");
  const Time now = kernel_.now();
  const Effect e{record.ref(), record.key, record.version, record.attempt, now};
  const std::uint64_t before = store_.effects_committed();
  const Applied a = relaysim::outbox::apply_once(store_, e, [fate] { return fate == Fate::die; });
  const std::uint64_t applied = store_.effects_committed() - before;
  RELAYSIM_ASSERT(applied <= 1, "one handling applies one effect at most");
  if (applied == 1) events_.emit(EffectApplied{record, pod, now});
  if (a == Applied::duplicate) events_.emit(EffectDeduped{record, pod, now});
  if (a == Applied::died) events_.emit(HandlerDied{record, now});
}

}  // namespace relaysim::sim::outbox
