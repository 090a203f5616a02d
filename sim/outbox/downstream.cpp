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

DownstreamFates::DownstreamFates(const DownstreamSpec& spec, std::uint64_t seed)
    : spec_(spec), latency_(spec.latency), rng_(Rng::derive(seed, "downstream")) {}

DownstreamFates::Decision DownstreamFates::decide(Time now, Duration timeout) {
  RELAYSIM_ASSERT(timeout > Duration::zero(), "a handling has a timeout");
  const Duration round_trip = scale(latency_.sample(rng_), slowdown_at(spec_.slowdowns, now));
  Decision d;
  d.arrives_in = round_trip / 2;
  const Time arrives = now + d.arrives_in;
  for (const Outage& o : spec_.outages) {
    if (o.window.contains(arrives)) d.fate = o.mode == OutageMode::error ? Fate::fail : Fate::swallow;
  }
  if (d.fate == Fate::apply) {
    const double u = rng_.uniform01();
    double edge = spec_.error_rate;
    if (u < edge) {
      d.fate = Fate::fail;
    } else if (u < (edge += spec_.rejection_rate)) {
      d.fate = Fate::reject;
    } else if (u < (edge += spec_.deaths)) {
      d.fate = Fate::die;
    } else if (u < (edge += spec_.lost_answers)) {
      d.fate = Fate::lose_answer;
    }
  }
  d.answer_in = timeout;
  if (round_trip <= timeout) {
    switch (d.fate) {
      case Fate::apply: d.answer = Handled::done; d.answer_in = round_trip; break;
      case Fate::fail: d.answer = Handled::failed; d.answer_in = round_trip; break;
      case Fate::reject: d.answer = Handled::rejected; d.answer_in = round_trip; break;
      default: break;
    }
  }
  RELAYSIM_ASSERT(d.answer_in <= timeout, "an answer comes by the timeout");
  return d;
}

SimDownstream::SimDownstream(const DownstreamSpec& spec, Kernel& kernel, std::uint64_t seed,
                             relaysim::outbox::EffectStore& store, WorldEvents& events)
    : fates_(spec, seed), kernel_(kernel), store_(store), events_(events) {}

void SimDownstream::handle(Process& caller, std::uint32_t pod, const Record& record, Duration timeout,
                           relaysim::outbox::Downstream::HandleCallback done) {
  RELAYSIM_ASSERT(timeout > Duration::zero() && static_cast<bool>(done), "a handling has a timeout and someone to answer");
  const Time now = kernel_.now();
  const DownstreamFates::Decision d = fates_.decide(now, timeout);
  if (d.arrives()) {
    const bool dies = d.fate == DownstreamFates::Fate::die;
    kernel_.at(now + d.arrives_in, [this, record, pod, dies] { arrive(record, pod, dies); });
  }
  caller.at(now + d.answer_in, [answer = d.answer, done = std::move(done)]() mutable { done(answer); });
}

void SimDownstream::arrive(const Record& record, std::uint32_t pod, bool dies) {
  const Time now = kernel_.now();
  const Effect e{record.ref(), record.key, record.version, record.attempt, now};
  const std::uint64_t before = store_.effects_committed();
  const Applied a = relaysim::outbox::apply_once(store_, e, [dies] { return dies; });
  const std::uint64_t applied = store_.effects_committed() - before;
  RELAYSIM_ASSERT(applied <= 1, "one handling applies one effect at most");
  if (applied == 1) events_.emit(EffectApplied{record, pod, now});
  if (a == Applied::duplicate) events_.emit(EffectDeduped{record, pod, now});
  if (a == Applied::died) events_.emit(HandlerDied{record, now});
}

}  // namespace relaysim::sim::outbox
